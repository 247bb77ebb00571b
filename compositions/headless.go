package compositions

import (
	"context"
	"errors"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// RunResult is the outcome of one headless task.
type RunResult struct {
	SessionID string
	// Text is the last non-empty assistant text of the turn.
	Text string
	// End is the reason of the task's final turn/end.
	End session.TurnEndReason
}

// Completed reports whether the task's turn ended "completed".
func (r RunResult) Completed() bool { return r.End.Kind == session.EndCompleted }

// TaskOptions observes a headless task as it runs.
type TaskOptions struct {
	// Started, when set, receives the session id once the session exists,
	// before the task is sent.
	Started func(sessionID string)
	// Observe, when set, receives every event the task appends to the
	// session, in order, on the appending goroutine: it must not block
	// for long or call back into the session.
	Observe func(session.Event)
}

// RunTask runs one task in a fresh persisted session in cwd and waits for the
// agent to go idle. Cancelling ctx cancels the turn (cause "user"); the
// session is closed and flushed before RunTask returns. The headless runtime
// registers no approver, so anything that would ask is denied unless the
// permission mode is bypass.
func RunTask(ctx context.Context, r *Runtime, cwd, task string) (RunResult, error) {
	return RunTaskWith(ctx, r, cwd, task, TaskOptions{})
}

// RunTaskWith is RunTask with observers.
func RunTaskWith(ctx context.Context, r *Runtime, cwd, task string, o TaskOptions) (RunResult, error) {
	if strings.TrimSpace(task) == "" {
		return RunResult{}, errors.New("the task is empty: pass it as an argument, e.g. dsh run \"fix the failing test\"")
	}
	a, err := r.NewSession(ctx, cwd)
	if err != nil {
		return RunResult{}, err
	}
	res := RunResult{SessionID: a.ID()}
	if o.Started != nil {
		o.Started(a.ID())
	}
	if o.Observe != nil {
		defer a.Session().Subscribe(o.Observe)()
	}
	start := a.Session().Len()
	a.Followup(agent.UserText(task, r.NewID()))
	stop := context.AfterFunc(ctx, func() { a.Cancel(session.CancelCause{Kind: agent.CauseUser}) })
	waitErr := a.WhenIdle(context.WithoutCancel(ctx))
	stop()
	res.Text, res.End = outcome(a.Session().Events(start))
	if r, ok := a.UnloggedEnd(); ok {
		// The log could not record how the turn ended (a full disk).
		res.End = r
	}
	return res, errors.Join(waitErr, r.CloseSession(a))
}

// outcome extracts the last assistant text and the final turn/end reason.
func outcome(events []session.Event) (string, session.TurnEndReason) {
	var (
		text string
		end  = session.TurnEndReason{Kind: session.EndInterrupted}
	)
	for _, e := range events {
		switch e.Type {
		case session.TypeAssistantMessage:
			var m session.AssistantMessage
			if e.DecodeData(&m) == nil {
				if t := strings.TrimSpace(session.JoinText(m.Message.Content)); t != "" {
					text = session.JoinText(m.Message.Content)
				}
			}
		case session.TypeTurnEnd:
			var te session.TurnEnd
			if e.DecodeData(&te) == nil {
				end = te.Reason
			}
		}
	}
	return text, end
}
