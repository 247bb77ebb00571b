package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of one server's tool listing.
const (
	maxToolPages = 100
	maxTools     = 512
)

// conn is one server of a manager: its config, its current connection and
// the tools it registered.
type conn struct {
	m      *Manager
	cfg    Server
	slug   string
	cfgErr error
	// started is closed when the first start attempt ended.
	started   chan struct{}
	startOnce sync.Once
	// refresh wakes the refresher after notifications/tools/list_changed.
	refresh chan struct{}

	mu         sync.Mutex
	state      State
	errText    string
	stderr     string
	restarted  bool
	closed     bool
	live       *link
	restarting chan struct{} // non-nil while a restart runs
	removes    []func()
	ntools     int
}

// link is one connection to the server (one process, for stdio).
type link struct {
	cs     *sdk.ClientSession
	proc   *proc // nil unless stdio
	stderr *tail
	// exited is closed once the connection ended; exit then says how.
	exited chan struct{}
	exit   string
}

func newConn(m *Manager, s Server, slug string) *conn {
	c := &conn{m: m, cfg: s, slug: slug, state: StateStarting,
		started: make(chan struct{}), refresh: make(chan struct{}, 1)}
	if err := s.Validate(); err != nil {
		c.cfgErr = err
	} else if c.cfg, err = s.Expand(m.opts.Env); err != nil {
		c.cfgErr = err
	}
	return c
}

func (c *conn) markStarted() { c.startOnce.Do(func() { close(c.started) }) }

func (c *conn) status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.statusLocked()
}

func (c *conn) statusLocked() Status {
	return Status{
		Session: c.m.opts.Session, Name: c.cfg.Name, Transport: c.cfg.Transport(),
		State: c.state, Tools: c.ntools, Error: c.errText, Stderr: c.stderr, Restarted: c.restarted,
	}
}

// start makes the first connection.
func (c *conn) start() {
	defer c.markStarted()
	if c.cfgErr != nil {
		c.fail(c.cfgErr.Error(), "")
		return
	}
	c.m.goOwned(c.refresher)
	l, list, err := c.dial(c.m.ctx)
	if err != nil {
		c.fail(err.Error(), stderrOf(l))
		return
	}
	c.install(l, list)
}

func stderrOf(l *link) string {
	if l == nil {
		return ""
	}
	return l.stderr.String()
}

// dial connects, completes the handshake and lists the tools, within the
// start timeout. On failure the returned link (if any) only carries stderr.
func (c *conn) dial(parent context.Context) (*link, []*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(parent, c.m.opts.StartTimeout)
	defer cancel()
	l := &link{stderr: &tail{}, exited: make(chan struct{})}
	transport, err := c.transport(l)
	if err != nil {
		return l, nil, fmt.Errorf("it could not start: %w", err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "dsh", Version: c.m.opts.Version}, &sdk.ClientOptions{
		// dsh offers no roots, sampling or elicitation.
		Capabilities:                &sdk.ClientCapabilities{},
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { c.requestRefresh() },
		ProgressNotificationHandler: c.m.calls.handle,
	})
	// The handshake is bounded by ctx; the connection itself (the SSE
	// stream) lives as long as the manager.
	cs, err := client.Connect(ctx, lasting{transport, parent}, nil)
	if err != nil {
		l.shutdown()
		return l, nil, c.startError(ctx, parent, err)
	}
	l.cs = cs
	list, err := listTools(ctx, cs)
	if err != nil {
		l.shutdown()
		return l, nil, c.startError(ctx, parent, fmt.Errorf("listing its tools: %w", err))
	}
	return l, list, nil
}

func (c *conn) startError(ctx, parent context.Context, err error) error {
	switch {
	case parent.Err() != nil:
		return errors.New("the session closed before it finished starting")
	case ctx.Err() != nil:
		return fmt.Errorf("it did not finish starting within %s (connect, initialize and list tools)", c.m.opts.StartTimeout)
	}
	return fmt.Errorf("it could not start: %v", err)
}

func (c *conn) transport(l *link) (sdk.Transport, error) {
	switch c.cfg.Transport() {
	case TransportStdio:
		p, t, err := startProc(c.cfg, c.m.opts.Dir, l.stderr)
		if err != nil {
			return nil, err
		}
		l.proc = p
		return t, nil
	case TransportHTTP:
		return &sdk.StreamableClientTransport{Endpoint: c.cfg.URL, HTTPClient: httpClient(c.cfg.Headers), MaxRetries: 2}, nil
	case TransportSSE:
		return &sdk.SSEClientTransport{Endpoint: c.cfg.URL, HTTPClient: httpClient(c.cfg.Headers)}, nil
	}
	return nil, fmt.Errorf("unknown transport %q", c.cfg.Transport())
}

// listTools reads every page of tools/list, bounded in pages and tools.
func listTools(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	if init := cs.InitializeResult(); init != nil && init.Capabilities != nil && init.Capabilities.Tools == nil {
		return nil, nil
	}
	var out []*sdk.Tool
	cursor := ""
	for range maxToolPages {
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		if len(out) > maxTools {
			return out[:maxTools], nil
		}
		if res.NextCursor == "" {
			return out, nil
		}
		cursor = res.NextCursor
	}
	return nil, fmt.Errorf("it returned more than %d pages of tools", maxToolPages)
}

// install makes l the live connection and registers its tools.
func (c *conn) install(l *link, list []*sdk.Tool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		l.shutdown()
		return
	}
	c.live = l
	c.state, c.errText, c.stderr = StateReady, "", ""
	c.mu.Unlock()
	c.setTools(l, list)
	c.m.goOwned(func() { c.watch(l) })
	c.m.notify(c.status())
}

// unregisterLocked removes the server's tools. Status and the registry
// change together under c.mu, so a status never reports tools that are gone.
func (c *conn) unregisterLocked() {
	for _, remove := range c.removes {
		remove()
	}
	c.removes, c.ntools = nil, 0
}

// setTools replaces the registered tools with list, if l is still the live
// connection.
func (c *conn) setTools(l *link, list []*sdk.Tool) {
	defs := c.definitions(list)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unregisterLocked()
	if c.closed || c.live != l {
		return
	}
	for _, d := range defs {
		remove, err := c.m.opts.Registry.Register(d)
		if err != nil {
			c.m.opts.Log.Warn("mcp: tool not registered", "server", c.cfg.Name, "tool", d.Name, "err", err)
			continue
		}
		c.removes = append(c.removes, remove)
	}
	c.ntools = len(c.removes)
}

// watch waits for l to end and records how; a server that ends on its own
// crashed.
func (c *conn) watch(l *link) {
	err := l.cs.Wait()
	l.shutdown()
	l.exit = describeExit(l, err)
	close(l.exited)
	c.lost(l)
}

func describeExit(l *link, err error) string {
	if l.proc != nil {
		return "its process ended: " + l.proc.state
	}
	if err != nil {
		return "the connection ended: " + err.Error()
	}
	return "the connection ended"
}

// lost handles the end of the live connection l.
func (c *conn) lost(l *link) {
	c.mu.Lock()
	if c.closed || c.live != l {
		c.mu.Unlock()
		return
	}
	c.live = nil
	c.errText, c.stderr = l.exit, l.stderr.String()
	if c.restarted {
		c.state = StateFailed
		c.errText = "it stopped again after its restart (" + l.exit + ")"
		c.unregisterLocked()
	} else {
		c.state = StateCrashed
	}
	st := c.statusLocked()
	c.mu.Unlock()
	c.m.notify(st)
}

// fail records a failed start and removes the server's tools.
func (c *conn) fail(why, stderr string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.state, c.errText, c.stderr = StateFailed, why, stderr
	c.unregisterLocked()
	st := c.statusLocked()
	c.mu.Unlock()
	c.m.notify(st)
}

// ready returns the live connection, restarting a crashed server once.
func (c *conn) ready(ctx context.Context) (*link, error) {
	for {
		c.mu.Lock()
		switch {
		case c.closed:
			c.mu.Unlock()
			return nil, unavailable(c.cfg.Name, "the session closed it")
		case c.live != nil:
			l := c.live
			c.mu.Unlock()
			return l, nil
		case c.restarting != nil:
			wait := c.restarting
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case c.state == StateCrashed && !c.restarted:
			done := make(chan struct{})
			c.restarting, c.restarted, c.state = done, true, StateStarting
			c.mu.Unlock()
			c.restart(done)
			continue
		default:
			why := c.errText
			c.mu.Unlock()
			return nil, unavailable(c.cfg.Name, why)
		}
	}
}

func (c *conn) restart(done chan struct{}) {
	defer func() {
		c.mu.Lock()
		c.restarting = nil
		c.mu.Unlock()
		close(done)
	}()
	l, list, err := c.dial(c.m.ctx)
	if err != nil {
		c.fail("its restart failed: "+err.Error(), stderrOf(l))
		return
	}
	c.install(l, list)
}

// requestRefresh asks the refresher to list the tools again.
func (c *conn) requestRefresh() {
	select {
	case c.refresh <- struct{}{}:
	default:
	}
}

// refresher lists the tools again after each list_changed notification.
func (c *conn) refresher() {
	for {
		select {
		case <-c.m.ctx.Done():
			return
		case <-c.refresh:
		}
		c.mu.Lock()
		l := c.live
		c.mu.Unlock()
		if l == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(c.m.ctx, c.m.opts.StartTimeout)
		list, err := listTools(ctx, l.cs)
		cancel()
		if err != nil {
			c.m.opts.Log.Warn("mcp: relisting tools failed", "server", c.cfg.Name, "err", err)
			continue
		}
		c.setTools(l, list)
		c.m.notify(c.status())
	}
}

// close ends the server for good.
func (c *conn) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.state = StateClosed
	l := c.live
	c.live = nil
	c.unregisterLocked()
	c.mu.Unlock()
	if l != nil {
		l.shutdown()
	}
	return nil
}

// stopGrace is how long a stdio server gets to exit after its stdin
// closed, and again after SIGTERM.
const stopGrace = time.Second

// shutdown closes the connection (for stdio: stdin first, then signals to
// the process group) and returns once the process was waited for.
func (l *link) shutdown() {
	if l.cs != nil {
		_ = l.cs.Close()
	}
	if l.proc != nil {
		if l.cs == nil {
			// The SDK never took the pipes; closing stdin is ours.
			_ = l.proc.group.Signal(syscall.SIGTERM)
		}
		l.proc.stop(stopGrace)
	}
}

// lasting connects its transport with a context of its own, so the end of
// the start timeout does not end an HTTP stream opened during the start.
type lasting struct {
	sdk.Transport
	ctx context.Context
}

func (t lasting) Connect(context.Context) (sdk.Connection, error) { return t.Transport.Connect(t.ctx) }

// headerTransport adds configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

func httpClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
}
