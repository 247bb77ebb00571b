package tui

import (
	"context"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// A tool card knows three moments of its call: the model asked for it
// (tool/call), the body started (after any approval), and it ended
// (tool/result). The second one is not in the log, so the UI wraps every
// dispatch: the card's duration and the "running tools" phase start there,
// and the time a call waited for the user's answer is shown as such. The
// wrapper also gives the body a live-output writer, so a running command's
// output appears in its card while it runs and stays there when the call
// is cancelled (an aborted result carries none of it).

// maxLiveTail is how much of a running call's output a card keeps.
const maxLiveTail = 16 << 10

// executing wraps every tool body of the UI's registry.
func (u *ui) executing(ctx context.Context, call *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
	sid := sessionOf(call)
	at := u.opts.Now().UnixMilli()
	u.post.post(func() {
		if t := u.transcriptOf(sid); t != nil {
			t.dispatched(call.CallID, at)
		}
	})
	return next(tools.WithLiveOutput(ctx, &liveOutput{u: u, session: sid, callID: call.CallID}), call)
}

func sessionOf(call *tools.Call) string {
	if call == nil || call.Session == nil {
		return ""
	}
	return call.Session.ID()
}

// transcriptOf is the current transcript when it shows session id.
func (u *ui) transcriptOf(id string) *transcript {
	if u.cur == nil || id == "" || u.cur.agent.ID() != id {
		return nil
	}
	return u.cur.t
}

// liveOutput carries one call's output to its card. Writes come from the
// command's reader goroutine; at most one flush is queued on the poster at
// a time, so a chatty command costs one append per draw.
type liveOutput struct {
	u               *ui
	session, callID string

	mu        sync.Mutex
	pending   []byte
	cut       bool // bytes were dropped before pending
	scheduled bool
}

func (l *liveOutput) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	if len(l.pending)+len(p) > maxLiveTail {
		l.cut = true
	}
	l.pending = appendTail(l.pending, p, maxLiveTail)
	if !l.scheduled {
		l.scheduled = true
		l.u.post.post(l.flush)
	}
	return len(p), nil
}

// flush runs on the UI goroutine.
func (l *liveOutput) flush() {
	l.mu.Lock()
	p, cut := l.pending, l.cut
	l.pending, l.cut, l.scheduled = nil, false, false
	l.mu.Unlock()
	if t := l.u.transcriptOf(l.session); t != nil {
		t.liveOutput(l.callID, p, cut)
	}
}

// appendTail appends p to b and keeps the last limit bytes.
func appendTail(b, p []byte, limit int) []byte {
	if len(p) >= limit {
		return append(b[:0], p[len(p)-limit:]...)
	}
	if over := len(b) + len(p) - limit; over > 0 {
		b = append(b[:0], b[over:]...)
	}
	return append(b, p...)
}

// dispatched marks the moment a call's body started.
func (t *transcript) dispatched(callID string, at int64) {
	ent := t.cards[callID]
	if ent == nil || ent.tool.status != cardRunning {
		return
	}
	ent.tool.started = at
	ent.touch()
}

// liveOutput adds output of a running call to its card.
func (t *transcript) liveOutput(callID string, p []byte, cut bool) {
	ent := t.cards[callID]
	if ent == nil || ent.tool.status != cardRunning {
		return
	}
	c := ent.tool
	if cut || len(c.live)+len(p) > maxLiveTail {
		c.liveCut = true
	}
	c.live = appendTail(c.live, p, maxLiveTail)
	ent.touch()
}

// asking marks a call waiting for the user's approval (on) or answered.
func (t *transcript) asking(callID string, on bool, at int64) {
	ent := t.cards[callID]
	if ent == nil || ent.tool.asking == on {
		return
	}
	ent.tool.asking = on
	ent.touch()
	st := &t.stats
	if on {
		st.asking++
		st.setPhase(phaseApproval, at)
		return
	}
	st.asking--
	if st.asking == 0 && st.phase == phaseApproval {
		st.setPhase(phaseTools, at)
	}
}
