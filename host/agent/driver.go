package agent

import (
	"context"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// drive is the driver goroutine: it sleeps until a waking message arrives and
// then runs turns while the inbox holds work. It exits when the root context
// is cancelled by Close.
func (a *Agent) drive() {
	defer close(a.done)
	for {
		select {
		case <-a.root.Done():
			return
		case <-a.wake:
		}
		for {
			act := a.beginTurn()
			if act == nil {
				break
			}
			a.turn(act.ctx)
			if !a.endActivity(act, true) {
				break
			}
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

// newActivity returns a cancellable activity; the caller holds a.mu.
func (a *Agent) newActivity() *activity {
	ctx, cancel := context.WithCancelCause(a.root)
	act := &activity{ctx: ctx, cancel: cancel}
	a.act = act
	return act
}

// beginTurn opens the activity of the next turn, or returns nil and goes idle
// when there is nothing to do.
func (a *Agent) beginTurn() *activity {
	a.mu.Lock()
	if a.closed || (len(a.nextTurn) == 0 && len(a.nextStep) == 0) {
		a.act = nil
		a.enter(phaseIdle)
		a.mu.Unlock()
		a.publishStatus()
		return nil
	}
	act := a.newActivity()
	a.mu.Unlock()
	return act
}

// endActivity releases act and reports whether the driver should run another
// turn. After a cancelled activity it does so only for a message that arrived
// after the cancellation; otherwise kept prompts wait for the next wake.
func (a *Agent) endActivity(act *activity, driver bool) (more bool) {
	a.mu.Lock()
	act.cancel(nil)
	pending := len(a.nextTurn) > 0 || len(a.nextStep) > 0
	// A compaction never starts queued work on its own: only a message
	// latched while it ran does.
	more = !a.closed && pending && (act.latched || (driver && !act.aborted))
	a.act = nil
	switch {
	case more && !driver:
		// A maintenance job ends with latched work: hand it to the driver.
		a.enter(phaseRunning)
		select {
		case a.wake <- struct{}{}:
		default:
		}
	case !more:
		a.enter(phaseIdle)
	}
	a.mu.Unlock()
	a.publishStatus()
	return more && driver
}

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
	a.endActivity(act, false)
	return err
}
