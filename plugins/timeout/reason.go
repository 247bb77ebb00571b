package timeout

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Code and ErrorName identify a timed-out call in tool results; only
// {name, code} is persisted in tool/result events.
const (
	Code      = "TOOL_TIMEOUT"
	ErrorName = "ToolTimeoutError"
)

// TimeoutReason is the cancellation cause of a call whose budget ran out.
// The policy installs a *TimeoutReason as its deadline's cause, so the tool's
// context reports it through context.Cause.
type TimeoutReason struct {
	Code    string
	Timeout time.Duration
}

func (r *TimeoutReason) Error() string { return r.Code + " after " + formatMs(r.Timeout) + "ms" }

// Is makes a timeout match context.DeadlineExceeded, which is what it is.
func (r *TimeoutReason) Is(target error) bool { return target == context.DeadlineExceeded }

// TimeoutOf reports whether ctx ended because a TOOL_TIMEOUT budget ran out
// first. A context cancelled by its caller, or by an outer deadline with
// another code, reads as an ordinary cancellation.
func TimeoutOf(ctx context.Context) (TimeoutReason, bool) {
	var r *TimeoutReason
	if errors.As(context.Cause(ctx), &r) && r != nil && r.Code == Code {
		return *r, true
	}
	return TimeoutReason{}, false
}

// formatMs renders d in milliseconds the way the budget was declared: whole
// numbers without a fraction, sub-millisecond parts as a decimal fraction.
func formatMs(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}
