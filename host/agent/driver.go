package agent

import (
	"context"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// drive is the driver goroutine: it sleeps until a waking message arrives and
// then runs turns while the inbox holds work. It exits when the root context
// is cancelled by Close.
//
// The activity of a turn is created under a.mu by whoever makes the agent
// run (send, the end of the previous turn or of a compaction), so a Cancel
// always has an activity to abort, even before the driver picks it up.
func (a *Agent) drive() {
	defer close(a.done)
	for {
		select {
		case <-a.root.Done():
			a.mu.Lock()
			if a.phase == phaseRunning {
				a.act = nil
				a.enter(phaseIdle)
			}
			a.mu.Unlock()
			a.publishStatus()
			return
		case <-a.wake:
		}
		for act := a.takeActivity(); act != nil; act = a.advance(act) {
			a.turn(act.ctx)
		}
	}
}

// enter moves to phase p; the caller holds a.mu.
func (a *Agent) enter(p phase) {
	if a.phase == phaseIdle && p != phaseIdle {
		a.idle = make(chan struct{})
	}
	if a.phase != phaseIdle && p == phaseIdle {
		close(a.idle)
	}
	a.phase = p
}

// run makes the agent run a turn: phase, activity and wake. The caller holds
// a.mu.
func (a *Agent) run() {
	a.enter(phaseRunning)
	a.newActivity()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// newActivity makes a new current activity; the caller holds a.mu.
func (a *Agent) newActivity() *activity {
	ctx, cancel := context.WithCancelCause(a.root)
	act := &activity{ctx: ctx, cancel: cancel}
	a.act = act
	return act
}

// takeActivity returns the activity the driver was woken for, or nil (and
// goes idle) when it was closed or its message was cancelled meanwhile.
func (a *Agent) takeActivity() *activity {
	a.mu.Lock()
	act := a.act
	if a.phase != phaseRunning || act == nil || a.closed || !a.pending() {
		a.stop()
		a.mu.Unlock()
		a.publishStatus()
		return nil
	}
	a.mu.Unlock()
	return act
}

// advance ends act and returns the activity of the next turn, or nil when
// the agent goes idle. After a cancelled turn another one runs only for a
// message that arrived after the cancellation; kept prompts wait for the
// next wake.
func (a *Agent) advance(act *activity) *activity {
	a.mu.Lock()
	act.cancel(nil)
	if a.closed || !a.pending() || (act.aborted && !act.latched) {
		a.stop()
		a.mu.Unlock()
		a.publishStatus()
		return nil
	}
	next := a.newActivity()
	a.mu.Unlock()
	return next
}

// endMaintenance ends a compaction's activity; a message that arrived while
// it ran wakes the driver. Queued prompts kept by an earlier Cancel do not.
func (a *Agent) endMaintenance(act *activity) {
	a.mu.Lock()
	act.cancel(nil)
	a.stop()
	if !a.closed && a.pending() && act.latched {
		a.run()
	}
	a.mu.Unlock()
	a.publishStatus()
}

// stop makes the agent idle; the caller holds a.mu.
func (a *Agent) stop() {
	a.act = nil
	a.enter(phaseIdle)
}

// pending reports queued work; the caller holds a.mu.
func (a *Agent) pending() bool { return len(a.nextTurn) > 0 || len(a.nextStep) > 0 || a.retryTurn }

// publishStatus notifies observers until the last published status is the
// current one. Only one goroutine publishes at a time; a change made while it
// publishes (even by an observer) is picked up by its next round.
func (a *Agent) publishStatus() {
	a.mu.Lock()
	if a.publishing {
		a.mu.Unlock()
		return
	}
	a.publishing = true
	for {
		s := statusOf(a.phase)
		if s == a.published {
			a.publishing = false
			a.mu.Unlock()
			return
		}
		a.published = s
		a.mu.Unlock()
		a.statusObs.Emit(s, func(v any) { a.log.Error("status observer panicked", "panic", fmt.Sprint(v)) })
		a.mu.Lock()
	}
}

// Compact summarizes the older part of the conversation now, regardless of
// the automatic threshold. It runs only while the agent is idle (ErrBusy
// otherwise); messages sent meanwhile wait until it ends. A failed attempt is
// logged and returned as a *CompactionError; ErrNothingToCompact means the
// conversation has nothing that can be summarized.
func (a *Agent) Compact(ctx context.Context) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	if a.phase != phaseIdle {
		a.mu.Unlock()
		return ErrBusy
	}
	a.enter(phaseMaintenance)
	act := a.newActivity()
	a.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		act.cancel(&cancelError{session.CancelCause{Kind: CauseUser, Reason: "compaction cancelled"}})
	})
	defer stop()
	err := a.compactNow(act.ctx)
	a.endMaintenance(act)
	return err
}
