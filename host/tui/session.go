package tui

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// binding is the UI's hold on one agent: its transcript and the observer
// subscriptions feeding it.
type binding struct {
	agent   *agent.Agent
	t       *transcript
	unsub   []func()
	running bool
	// queued are messages sent during a turn or a compaction that have not
	// yet entered the log, in the order they were sent; they are shown
	// above the input until they do.
	queued []queuedMsg
	// cancelling is set by Esc until the turn or compaction has stopped.
	cancelling bool
	// stopCompact cancels the running /compact; nil when none runs.
	stopCompact func()
}

// queuedMsg is a sent message waiting for the agent to take it.
type queuedMsg struct{ id, text string }

func (b *binding) queue(id, text string) { b.queued = append(b.queued, queuedMsg{id, text}) }

// unqueue forgets a message that entered the log.
func (b *binding) unqueue(id string) {
	for i, q := range b.queued {
		if q.id == id {
			b.queued = append(b.queued[:i:i], b.queued[i+1:]...)
			return
		}
	}
}

func (b *binding) detach() {
	for _, f := range b.unsub {
		f()
	}
	b.unsub = nil
}

func emptyHeader(cwd string) session.Header {
	return session.Header{Cwd: session.Ptr(cwd)}
}

// present looks up a tool's presenter in the registry, as session sees it.
func (u *ui) present(session, name string) func(*tools.Call) *tools.CallView {
	def, ok := u.opts.Tools.Lookup(session, name)
	if !ok || def.PresentCall == nil {
		return nil
	}
	return def.PresentCall
}

// attach makes a the current session: it subscribes first and snapshots
// second, so no event is missed, and drops the events the snapshot already
// holds by seq. It runs on the UI goroutine (or before the UI starts).
func (u *ui) attach(a *agent.Agent) {
	b := &binding{agent: a}
	live := a.Session()
	b.unsub = append(b.unsub, live.Subscribe(func(e session.Event) {
		// A tool's presentation is taken now, on the agent's goroutine,
		// because the call has not run yet: an edit's diff is only
		// computable before the edit.
		var view *tools.CallView
		if e.Type == session.TypeToolCall {
			view = u.captureView(live, e)
		}
		u.post.post(func() { u.onEvent(b, e, view) })
	}))
	b.unsub = append(b.unsub, a.OnStatus(func(s agent.Status) {
		u.post.post(func() { u.onStatus(b, s) })
	}))
	h, events := live.Snapshot()
	b.t = newTranscript(h, u.present)
	b.t.load(events)
	b.running = a.Status() == agent.StatusRunning
	u.cur = b
	u.view.setTranscript(b.t)
	u.history = historyOf(u.recalled, b.t.prompts)
	u.histPos = len(u.history)
	u.setWindowTitle()
}

// setWindowTitle names the terminal window after the session. The title
// goes out in an escape sequence, so it is flattened and escaped first.
func (u *ui) setWindowTitle() {
	title := "dsh"
	if t := u.transcript().title; t != "" {
		title = oneLine(t) + " — dsh"
	}
	u.app.SetTitle(title)
}

func (u *ui) captureView(live *session.Live, e session.Event) *tools.CallView {
	var d session.ToolCall
	if e.DecodeData(&d) != nil {
		return nil
	}
	present := u.present(live.ID(), d.Name)
	if present == nil {
		return nil
	}
	return safePresent(present, &tools.Call{
		CallID: d.CallID, Name: d.Name, Arguments: d.Arguments, Args: tools.ParseArguments(d.Arguments),
		Location: tools.Location{Turn: d.Turn, Step: d.Step}, Session: live, Cwd: live.Header().CwdOrEmpty(),
	})
}

// onEvent applies a live event to its binding's transcript.
func (u *ui) onEvent(b *binding, e session.Event, view *tools.CallView) {
	if b != u.cur {
		return
	}
	t := b.t
	switch {
	case e.Seq < t.next:
		return
	case e.Seq > t.next:
		// Should not happen (observers run in seq order); rebuild rather
		// than show a transcript with a hole.
		h, events := b.agent.Session().Snapshot()
		b.t = newTranscript(h, u.present)
		b.t.load(events)
		u.view.setTranscript(b.t)
		return
	}
	t.apply(e, true)
	if view != nil {
		t.capture(callIDOf(e), view)
	}
	if e.Type == session.TypeUserMessage {
		var m session.Message
		if e.DecodeData(&m) == nil {
			b.unqueue(m.ID)
		}
	}
	if e.Type == session.TypeSessionTitle {
		u.setWindowTitle()
	}
}

func callIDOf(e session.Event) string {
	var d session.ToolCall
	_ = e.DecodeData(&d)
	return d.CallID
}

// syncRunning reads whether a turn runs from the agent after the UI woke
// it. Assuming "running" would be wrong when the turn has already ended:
// the agent publishes only changes of its status, so a turn that runs and
// ends before the wake-up publishes (idle, running, idle) sends no status
// at all, and an assumed "running" would stay on screen for good.
func (b *binding) syncRunning() {
	b.running = b.agent.Status() == agent.StatusRunning
}

func (u *ui) onStatus(b *binding, s agent.Status) {
	if b != u.cur {
		return
	}
	b.running = s == agent.StatusRunning
	if !b.running {
		b.cancelling = false
		if b.stopCompact == nil {
			b.queued = nil
		}
		if b.t.stats.phase != phaseCompacting {
			b.t.stats.phase = phaseIdle
		}
	}
}

// switchSession opens another session in the background and makes it
// current once it is open; the previous one is then closed (flushed and
// released). what names the operation for messages.
func (u *ui) switchSession(what string, open func(ctx context.Context) (*agent.Agent, error)) {
	if u.opening != "" {
		u.setFlash(span{"still " + u.opening + "; wait a moment", u.th.warn})
		return
	}
	u.opening = what
	u.goBackground(func(ctx context.Context) {
		a, err := open(ctx)
		adopted := make(chan struct{})
		u.post.post(func() {
			close(adopted)
			u.opening = ""
			if err != nil {
				u.opts.Log.Warn("opening a session failed", "what", what, "err", err)
				u.notice(entryError, "%s failed: %v", what, err)
				return
			}
			old := u.cur
			if old != nil && old.agent == a {
				u.notice(entryNotice, "this session is already open")
				return
			}
			if old != nil {
				old.detach()
			}
			u.attach(a)
			u.closeAllPages()
			if old != nil {
				u.closeInBackground(old.agent)
			}
		})
		if err != nil {
			return
		}
		select {
		case <-adopted:
		case <-u.post.done:
			select {
			case <-adopted:
			default:
				// The UI closed before it could show the session; nobody
				// else will close it.
				_ = u.opts.Sessions.CloseSession(a)
			}
		}
	})
}

func (u *ui) closeInBackground(a *agent.Agent) {
	u.goBackground(func(context.Context) {
		if err := u.opts.Sessions.CloseSession(a); err != nil {
			u.opts.Log.Error("closing a session failed", "session", a.ID(), "err", err)
			u.post.post(func() { u.notice(entryError, "closing session %s: %v", shortID(a.ID()), err) })
		}
	})
}

// newSession starts a fresh session in the workspace.
func (u *ui) newSession() {
	cwd := u.opts.Cwd
	u.switchSession("starting a new session", func(ctx context.Context) (*agent.Agent, error) {
		return u.opts.Sessions.NewSession(ctx, cwd)
	})
}

// resume continues a persisted session.
func (u *ui) resume(id string) {
	if u.cur != nil && u.cur.agent.ID() == id {
		u.closeAllPages()
		u.notice(entryNotice, "this session is already open")
		return
	}
	u.switchSession("resuming "+shortID(id), func(ctx context.Context) (*agent.Agent, error) {
		return u.opts.Sessions.ResumeSession(ctx, id)
	})
}

// fork starts a session seeded with the current one's log.
func (u *ui) fork() {
	if u.cur == nil {
		u.notice(entryError, "no session is open to fork")
		return
	}
	id := u.cur.agent.ID()
	u.switchSession("forking "+shortID(id), func(ctx context.Context) (*agent.Agent, error) {
		return u.opts.Sessions.ForkSession(ctx, id, session.ForkLatest)
	})
}

// compact summarizes the older conversation now.
func (u *ui) compact() {
	if u.cur == nil {
		u.notice(entryError, "no session is open")
		return
	}
	b := u.cur
	if b.stopCompact != nil {
		u.notice(entryNotice, "a compaction is already running; Esc cancels it")
		return
	}
	a := b.agent
	ctx, cancel := context.WithCancel(u.ctx)
	b.stopCompact = cancel
	u.goBackground(func(context.Context) {
		err := a.Compact(ctx)
		u.post.post(func() {
			cancelled := ctx.Err() != nil
			cancel()
			b.stopCompact, b.cancelling = nil, false
			if b != u.cur {
				return
			}
			var ce *agent.CompactionError
			switch {
			case err == nil:
				u.notice(entryNotice, "conversation compacted")
			case cancelled:
				// The log's compaction/end says so.
			case errors.Is(err, agent.ErrBusy):
				u.notice(entryError, "cannot compact while a turn runs: wait for it to finish or press Esc to cancel it")
			case errors.Is(err, agent.ErrNothingToCompact):
				u.notice(entryNotice, "nothing to compact yet: the conversation is too short")
			case errors.As(err, &ce):
				// The log already shows compaction/end with the error.
			default:
				u.notice(entryError, "compaction failed: %v", err)
			}
		})
	})
}

// workspaceOf is a session's cwd, or the UI's for a session without one.
func (u *ui) workspaceOf(h session.Header) string {
	if c := h.CwdOrEmpty(); c != "" {
		return filepath.Clean(c)
	}
	return u.opts.Cwd
}

// historyOf is what Up walks through: the lines sent in this workspace
// (in earlier runs and this one), then the session's own prompts that were
// not among them (a session resumed from elsewhere).
func historyOf(recalled, prompts []string) []string {
	out := append([]string(nil), recalled...)
	seen := make(map[string]bool, len(recalled))
	for _, r := range recalled {
		seen[r] = true
	}
	for _, p := range prompts {
		if !seen[p] {
			out = append(out, p)
		}
	}
	return out
}

// retry runs the failed last turn again without a new message, so the
// model does not see the prompt twice.
func (u *ui) retry() {
	if u.cur == nil {
		u.notice(entryError, "no session is open")
		return
	}
	switch err := u.cur.agent.Retry(); {
	case err == nil:
		u.cur.syncRunning()
		u.view.toBottom()
	case errors.Is(err, agent.ErrNothingToRetry):
		u.notice(entryNotice, "nothing to retry: the last turn did not fail")
	case errors.Is(err, agent.ErrRunning):
		u.notice(entryError, "cannot retry while a turn or /compact runs: wait for it, or press Esc to cancel it")
	default:
		u.notice(entryError, "retry failed: %v", err)
	}
}
