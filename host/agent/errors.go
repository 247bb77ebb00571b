package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// CodeSessionWrite is the failure code of a turn that ended because the session
// log could not be appended to or flushed.
const CodeSessionWrite = "SESSION_WRITE_FAILED"

// Cancel cause kinds.
const (
	CauseUser     = "user"
	CauseParent   = "parent"
	CauseHook     = "hook"
	CauseDisposed = "disposed"
)

var (
	// ErrClosed is returned by operations on a closed agent.
	ErrClosed = errors.New("agent is closed")
	// ErrBusy is returned by Compact while a turn or another compaction runs.
	ErrBusy = errors.New("agent is busy: wait for the current turn to finish (or cancel it) before compacting")
	// ErrNothingToCompact is returned by Compact when no older part of the
	// conversation can be summarized without splitting a tool call from its
	// result.
	ErrNothingToCompact = errors.New("nothing to compact: the conversation is too short")
	// ErrNothingToRetry is returned by Retry when the last turn did not
	// fail.
	ErrNothingToRetry = errors.New("nothing to retry: the last turn did not fail")
	// ErrRunning is returned by Retry while a turn or a compaction runs.
	ErrRunning = errors.New("a turn is running: wait for it to finish or cancel it first")
)

// CompactionError reports a compaction attempt that was logged (compaction/start
// ... compaction/end {error}) but did not replace any history.
type CompactionError struct {
	CompactionID string
	Cause        error
}

func (e *CompactionError) Error() string {
	return fmt.Sprintf("compaction failed, history left unchanged: %v", e.Cause)
}

func (e *CompactionError) Unwrap() error { return e.Cause }

// cancelError is the context cause of a cancelled activity.
type cancelError struct{ cause session.CancelCause }

// Is makes a cancellation cause match context.Canceled, so code that only
// knows the standard error still recognises it.
func (e *cancelError) Is(target error) bool { return target == context.Canceled }

func (e *cancelError) Error() string {
	if e.cause.Reason != "" {
		return fmt.Sprintf("cancelled (%s): %s", e.cause.Kind, e.cause.Reason)
	}
	return fmt.Sprintf("cancelled (%s)", e.cause.Kind)
}

// causeOf returns who cancelled ctx; a context cancelled without one of our
// causes (the root context of a closing agent) counts as disposed.
func causeOf(ctx context.Context) session.CancelCause {
	var ce *cancelError
	if errors.As(context.Cause(ctx), &ce) {
		return ce.cause
	}
	return session.CancelCause{Kind: CauseDisposed}
}

// failError carries a structured failure to the turn boundary, where it
// becomes turn/end {kind:"error", error: failure}.
type failError struct {
	failure session.Failure
	cause   error
}

func (e *failError) Error() string { return e.failure.Message }
func (e *failError) Unwrap() error { return e.cause }

// writeError wraps a failed append or flush of the session log.
func writeError(err error) *failError {
	return &failError{
		failure: session.Failure{
			Code: CodeSessionWrite,
			Message: fmt.Sprintf("the session log could not be written (%v); "+
				"check free disk space and permissions of the sessions directory, then resend the prompt", err),
		},
		cause: err,
	}
}

// failureOf maps any turn error to its logged failure.
func failureOf(err error) session.Failure {
	var fe *failError
	if errors.As(err, &fe) {
		return fe.failure
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return le.Failure
	}
	return session.Failure{Code: llm.CodeUnknown, Message: err.Error()}
}
