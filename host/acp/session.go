package acp

import (
	"context"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// sess is one session of the connection: its agent, the outbox that
// delivers its updates, and the prompt running on it.
type sess struct {
	id    string
	cwd   string
	agent *agent.Agent
	live  *session.Live
	out   *outbox
	tr    *translator
	unsub func()

	mu     sync.Mutex
	run    *promptRun
	turn   int // the turn the log is in, from turn/start
	closed bool
}

// promptRun is one session/prompt between admission and its answer. The
// observer correlates it with the turn its message entered.
type promptRun struct {
	msgID string
	done  chan struct{}
	// Guarded by sess.mu.
	cancelled bool
	admitted  bool
	turn      int
	end       *session.TurnEndReason
}

// attach makes a the connection's session: it starts the outbox, then, after
// replay (nil for none) was queued, subscribes to a's new events. The
// session is registered last, so no request can reach it half-built.
func (s *server) attach(a *agent.Agent, replay []session.Event) (*sess, error) {
	live := a.Session()
	h := live.Header()
	ss := &sess{id: h.ID, cwd: h.CwdOrEmpty(), agent: a, live: live}
	ss.tr = newTranslator(s.b.Tools, live, s.terminalOutput.Load, s.contextWindow)
	ss.tr.buffers = func(path string) bool {
		return (s.fsRead.Load() || s.fsWrite.Load()) && (&clientFiles{cwd: ss.cwd}).serves(path)
	}
	ss.out = newOutbox(func(u sdk.SessionUpdate) error { return s.sendUpdate(ss.id, u) },
		func(err error) { s.log.Warn("acp: session update not delivered", "session", ss.id, "err", err) })
	for _, e := range replay {
		ss.out.Push(ss.tr.replay(e)...)
		ss.trackTurn(e)
	}
	ss.unsub = live.Subscribe(ss.observe)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		ss.unsub()
		ss.out.Close()
		return nil, errShuttingDown
	}
	if _, dup := s.sessions[ss.id]; dup {
		// Another request attached it meanwhile; keep that one.
		ss.unsub()
		ss.out.Close()
		return s.sessions[ss.id], nil
	}
	s.sessions[ss.id] = ss
	return ss, nil
}

// observe runs on the agent's appending goroutine for every new event, in
// log order: it queues the event's updates and correlates the prompt.
func (ss *sess) observe(e session.Event) {
	ss.out.Push(ss.tr.stream(e)...)
	switch e.Type {
	case session.TypeTurnStart, session.TypeUserMessage, session.TypeTurnEnd:
		ss.trackTurn(e)
	}
}

// trackTurn follows turn boundaries and binds the running prompt to the
// turn its message entered.
func (ss *sess) trackTurn(e session.Event) {
	switch e.Type {
	case session.TypeTurnStart:
		var d session.TurnStart
		if e.DecodeData(&d) == nil {
			ss.mu.Lock()
			ss.turn = d.Turn
			ss.mu.Unlock()
		}
	case session.TypeUserMessage:
		var m session.Message
		if e.DecodeData(&m) != nil {
			return
		}
		ss.mu.Lock()
		if r := ss.run; r != nil && !r.admitted && m.ID == r.msgID {
			r.admitted, r.turn = true, ss.turn
		}
		ss.mu.Unlock()
	case session.TypeTurnEnd:
		var d session.TurnEnd
		if e.DecodeData(&d) != nil {
			return
		}
		ss.mu.Lock()
		if r := ss.run; r != nil && r.admitted && r.turn == d.Turn {
			reason := d.Reason
			r.end = &reason
		}
		ss.mu.Unlock()
	}
}

// close cancels the session's prompt, waits for it to answer, delivers the
// queued updates and closes the agent (which flushes the log).
func (ss *sess) close(factory Sessions) error {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil
	}
	ss.closed = true
	run := ss.run
	if run != nil {
		run.cancelled = true
	}
	ss.mu.Unlock()
	if run != nil {
		ss.agent.Cancel(session.CancelCause{Kind: agent.CauseUser, Reason: "session closed"})
		<-run.done
	}
	err := factory.CloseSession(ss.agent)
	ss.unsub()
	ss.out.Close()
	return err
}

// announce queues what a client shows about a session it just opened:
// the commands it offers and, for a session with history, its context use.
func (s *server) announce(ss *sess) {
	ss.out.Push(s.announcement(ss)...)
}

func (s *server) announcement(ss *sess) []sdk.SessionUpdate {
	out := []sdk.SessionUpdate{s.commandsUpdate()}
	if u, ok := usageOf(ss.live.Events(0), s.contextWindow); ok {
		out = append(out, usageUpdate(u))
	}
	return out
}

// flush waits until every update queued so far was written.
func (ss *sess) flush() {
	_ = ss.out.Flush(context.Background())
}
