package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Serve runs the ACP agent over in (the client's frames) and out (ours)
// until the input ends or ctx is done, then closes every session it opened,
// flushing their logs. The end of the input is a clean shutdown: Serve then
// returns nil unless closing a session failed, or building the Backend
// did.
//
// The Backend is built while the connection already runs, so initialize
// is answered at once. Once built, Serve installs the connection's
// approver on its Tools; calls of sessions it does not own go to the
// approver that was installed before. When ctx ends while in is blocked in
// Read, the goroutine reading in stays blocked until that Read returns.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	requests, ids := newLedger(), newInflight()
	w := &frameWriter{w: out, answers: requests, ids: ids}
	pr, pw := io.Pipe()
	s := newServer(opts)
	w.onAnswer = s.answered
	conn := sdk.NewAgentSideConnection(s, w, pr)
	// Nothing reaches the connection before the filter starts, so the
	// logger and s.conn are in place before any handler runs.
	sdkLog, shut := newGate(opts.Log.With("component", "acp-sdk").Handler())
	defer shut()
	conn.SetLogger(slog.New(sdkLog))
	s.conn = conn
	starting, stopStarting := context.WithCancel(ctx)
	defer stopStarting()
	type startResult struct {
		uninstall func()
		err       error
	}
	started := make(chan startResult, 1)
	go func() {
		uninstall, err := s.start(starting)
		started <- startResult{uninstall, err}
	}()

	filter := &frameFilter{in: in, out: pw, w: w, max: opts.MaxFrameBytes, log: opts.Log, requests: requests, ids: ids}
	filtered := make(chan struct{})
	go func() {
		defer close(filtered)
		filter.run()
	}()

	select {
	case <-conn.Done():
	case <-ctx.Done():
		_ = pr.CloseWithError(context.Cause(ctx))
		<-conn.Done()
	}
	// Every request received before the input ended gets its answer
	// (running prompts answer "cancelled": the SDK cancelled them; those
	// waiting for the Backend get it built); the SDK writes answers after
	// the handlers return, hence the ledger of the output. Then a Backend
	// still being built, which no request waits for, is abandoned, and the
	// sessions close.
	requests.wait(ctx)
	stopStarting()
	res := <-started
	err = s.shutdown()
	res.uninstall()
	_ = pr.Close()
	select {
	case <-filtered:
	case <-ctx.Done():
	}
	return errors.Join(res.err, err)
}

// start builds the Backend and installs the connection's hooks on it; it
// returns what removes them, and the build's failure unless ctx ended it
// (the input ended first: nothing failed). It closes s.ready either way.
func (s *server) start(ctx context.Context) (uninstall func(), failed error) {
	defer close(s.ready)
	b, err := s.opts.Backend(ctx, Early{s.early})
	if err == nil {
		b, err = b.check(s.opts)
	}
	if err != nil {
		if ctx.Err() != nil {
			s.startErr = errShuttingDown
			return func() {}, nil
		}
		s.startErr = err
		s.log.Error("acp: dsh could not start; every session request answers this error", "err", err)
		return func() {}, err
	}
	s.b = b
	restore := b.Tools.SetApprover(&approver{s: s, next: b.Tools.Approver()})
	unhook := b.Tools.Cleared.Subscribe(s.cleared)
	unwatch := s.watchMCP()
	unwrap := b.Tools.Execute.Use(s.executing)
	return func() {
		unwatch()
		unwrap()
		unhook()
		restore()
	}, nil
}

// server is the acp.Agent of one connection.
type server struct {
	opts Options
	log  *slog.Logger
	conn *sdk.AgentSideConnection

	// b serves the session requests. start sets it, or startErr, before
	// it closes ready; neither changes after. Only code that ran enter (or
	// works on a session, which exists only after that) reads them.
	b        Backend
	startErr error
	ready    chan struct{}
	// early is the Catalog the build serves session/list from before it
	// is done (Early.ServeCatalog).
	early *earlyCatalog

	// terminalOutput is the client's _meta.terminal_output capability.
	terminalOutput atomic.Bool
	// fsRead, fsWrite and terminals are the client's fs.readTextFile,
	// fs.writeTextFile and terminal capabilities.
	fsRead, fsWrite, terminals atomic.Bool

	mu       sync.Mutex
	sessions map[string]*sess
	// fresh are new sessions whose session/new answer is not written
	// yet: the client takes updates for a session only once it knows it.
	fresh   map[string]*sess
	closing bool
	// handlers counts running request handlers; shutdown waits for them so
	// no handler opens a session after the sessions were closed.
	handlers sync.WaitGroup
}

var (
	_ sdk.Agent       = (*server)(nil)
	_ sdk.AgentLoader = (*server)(nil)
)

func newServer(opts Options) *server {
	return &server{opts: opts, log: opts.Log, ready: make(chan struct{}), early: newEarlyCatalog(), sessions: map[string]*sess{}, fresh: map[string]*sess{}}
}

// errShuttingDown answers requests that arrive while the connection closes.
var errShuttingDown = internalError("dsh is shutting down")

// enter waits for the Backend, then registers a running handler; the
// returned func unregisters it. The wait is not cut short by the request's
// context: Serve cancels a build only once no request waits for it.
func (s *server) enter() (func(), error) {
	<-s.ready
	switch {
	case s.startErr == errShuttingDown:
		return nil, errShuttingDown
	case s.startErr != nil:
		return nil, internalError("dsh could not start: %v (fix it, then restart the agent)", s.startErr)
	}
	return s.register()
}

// register counts a running handler unless the connection is closing; the
// returned func uncounts it.
func (s *server) register() (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, errShuttingDown
	}
	s.handlers.Add(1)
	return s.handlers.Done, nil
}

// shutdown refuses new requests, waits for the running ones (the closed
// connection has cancelled their contexts, which cancels their prompts) and
// closes every session.
func (s *server) shutdown() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.handlers.Wait()
	s.mu.Lock()
	all := make([]*sess, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.sessions, s.fresh = map[string]*sess{}, map[string]*sess{}
	s.mu.Unlock()
	var errs []error
	for _, ss := range all {
		errs = append(errs, ss.close(s.b.Sessions))
	}
	return errors.Join(errs...)
}

// session returns the connection's session id.
func (s *server) session(id sdk.SessionId) (*sess, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[string(id)]
	if !ok {
		return nil, notFound("unknown session: %s", id)
	}
	return ss, nil
}

// owns reports whether call belongs to one of this connection's sessions.
func (s *server) owns(call *tools.Call) (*sess, bool) {
	if call == nil || call.Session == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[call.Session.ID()]
	if !ok || ss.live != call.Session {
		return nil, false
	}
	return ss, true
}

// cleared hears of every call that may now run: a call of one of the
// connection's sessions is reported in progress, after any approval and in
// model order, so the client sees pending, in_progress, then completed or
// failed.
func (s *server) cleared(call *tools.Call) {
	if ss, ok := s.owns(call); ok {
		ss.out.Push(sdk.UpdateToolCall(sdk.ToolCallId(call.CallID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
	}
}

// announceAfterAnswer queues the session's announcement (announce) for
// when the answer that names it has been written.
func (s *server) announceAfterAnswer(ss *sess) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fresh[ss.id] = ss
}

// answered hears of every answer as it is written to the client: the
// session/new answer of a fresh session makes it known to the client, and
// its announcement is written right after it, before any other frame (a
// scripted client's next answer included).
func (s *server) answered(frame []byte) []byte {
	s.mu.Lock()
	var known *sess
	for id, ss := range s.fresh {
		if bytes.Contains(frame, []byte(`"sessionId":`+jsonString(id))) {
			known = ss
			delete(s.fresh, id)
			break
		}
	}
	s.mu.Unlock()
	if known == nil {
		return nil
	}
	var out []byte
	for _, u := range s.announcement(known) {
		b, err := notificationFrame(known.id, u)
		if err != nil {
			s.log.Warn("acp: session announcement not encoded", "session", known.id, "err", err)
			continue
		}
		out = append(out, b...)
	}
	return out
}

// notificationFrame is the session/update line the SDK would write.
func notificationFrame(id string, u sdk.SessionUpdate) ([]byte, error) {
	params, err := json.Marshal(sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: u})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{"2.0", string(sdk.ClientMethodSessionUpdate), params})
	return append(b, '\n'), err
}

// sendUpdate writes one session/update; it never uses a request context, so
// the final updates of a cancelled prompt are still delivered.
func (s *server) sendUpdate(id string, u sdk.SessionUpdate) error {
	return s.conn.SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: u})
}
