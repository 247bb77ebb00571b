package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Defaults of Options.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 2 * time.Minute
)

// Options configures a Manager.
type Options struct {
	// Session scopes the registered tools; required.
	Session string
	// Registry receives the tools; required.
	Registry *tools.Registry
	// Servers are the entries to start; names must be unique (a repeated
	// name fails). Entries are expanded (${NAME}) and validated here, so a
	// bad one fails alone.
	Servers []Server
	// Dir is the working directory of stdio servers (the session's
	// workspace).
	Dir string
	// Version is reported as the client version in the handshake.
	Version string
	// StartTimeout bounds connecting, the handshake and listing tools;
	// CallTimeout bounds one tool call (it is also the tool's declared
	// budget for the timeout policy). Zero means the defaults.
	StartTimeout time.Duration
	CallTimeout  time.Duration
	// TrustReadOnlyHints lets a tool annotated readOnlyHint run as a read
	// (no approval, in parallel). Off, every MCP tool asks like a command.
	TrustReadOnlyHints bool
	// Env looks up ${NAME} references; nil means the process environment.
	Env func(string) (string, bool)
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// OnStatus is called after every state change of a server, from the
	// manager's goroutines; it must not block.
	OnStatus func(Status)
}

// Manager owns one session's MCP servers.
type Manager struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	conns  []*conn
	calls  progressTable

	mu     sync.Mutex // guards closed against wg.Add after Close
	closed bool

	closeOnce sync.Once
	closeErr  error
}

// Start begins connecting every server in the background and returns at
// once; Status and Wait follow the progress.
func Start(opts Options) (*Manager, error) {
	if opts.Session == "" || opts.Registry == nil {
		return nil, errors.New("mcp: Options.Session and Options.Registry are required")
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Env == nil {
		opts.Env = os.LookupEnv
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	servers := append([]Server(nil), opts.Servers...)
	sort.SliceStable(servers, func(i, j int) bool { return servers[i].Name < servers[j].Name })
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name
	}
	slugs := uniqueSlugs(names)
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, ctx: ctx, cancel: cancel}
	for i, s := range servers {
		c := newConn(m, s, slugs[i])
		if i > 0 && s.Name == servers[i-1].Name {
			c.cfgErr = fmt.Errorf("another MCP server of this session is also called %q; give each server its own name", s.Name)
		}
		m.conns = append(m.conns, c)
	}
	for _, c := range m.conns {
		m.goOwned(c.start)
	}
	return m, nil
}

// Session returns the session the manager serves.
func (m *Manager) Session() string { return m.opts.Session }

// Status returns every server's status, ordered by name.
func (m *Manager) Status() []Status {
	out := make([]Status, len(m.conns))
	for i, c := range m.conns {
		out[i] = c.status()
	}
	return out
}

// Wait blocks until no server is still starting for the first time, or ctx
// ends. Turns call it so the first request sees the tools of servers that
// were quick enough.
func (m *Manager) Wait(ctx context.Context) error {
	for _, c := range m.conns {
		select {
		case <-c.started:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close stops every server (killing stdio process groups), removes their
// tools and waits for the manager's goroutines. It is idempotent.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
		m.cancel()
		var wg sync.WaitGroup
		errs := make([]error, len(m.conns))
		for i, c := range m.conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = c.close()
			}()
		}
		wg.Wait()
		m.wg.Wait()
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}

func (m *Manager) notify(s Status) {
	lvl := slog.LevelInfo
	if s.Problem() {
		lvl = slog.LevelWarn
	}
	m.opts.Log.Log(context.Background(), lvl, "mcp: "+s.Message(), "session", s.Session, "server", s.Name, "state", string(s.State))
	if m.opts.OnStatus != nil {
		m.opts.OnStatus(s)
	}
}

// goOwned runs fn on a goroutine the manager waits for at Close; after
// Close it does nothing.
func (m *Manager) goOwned(fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		fn()
	}()
}
