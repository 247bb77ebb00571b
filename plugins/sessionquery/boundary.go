package sessionquery

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"

	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Service is the part of the trusted session-query service the tools call;
// *sessionquery.Service satisfies it.
type Service interface {
	FilterSessions(ctx context.Context, filters []sq.SessionFilter) ([]sq.SessionRecord, error)
	ReadTitleSnapshots(ctx context.Context, ids []string) ([]sq.TitleResult, error)
	SearchSessions(ctx context.Context, req sq.SessionSearchRequest) (sq.SessionSearchPage, error)
	SearchEvents(ctx context.Context, req sq.EventSearchRequest) (sq.EventSearchPage, error)
	TraceSession(ctx context.Context, id string) (sq.LineageTrace, error)
	TraceEvent(ctx context.Context, id string, seq int) (sq.EventTraceObservation, error)
	ReadEvent(ctx context.Context, id string, seq int, before, after *int) (sq.EventWindow, error)
}

var _ Service = (*sq.Service)(nil)

// Operation labels of the warnings the sanitizer logs.
const (
	opTargetAuthorization = "target authorization"
	opSessionIDAuth       = "session-id authorization"
	opTitleObservation    = "title observation"
	opTitleItem           = "title observation item"
	opSessionSearch       = "session search"
	opEventSearch         = "event search"
	opLineageTrace        = "session lineage trace"
	opEventTrace          = "event trace"
	opEventRead           = "event read"
)

// Diagnostic placeholders.
const (
	unprintable    = "[unprintable session query failure]"
	circularCause  = "[circular error cause]"
	truncatedCause = "[error cause chain truncated]"
	// maxCauseLinks bounds the rendered chain: an Unwrap that invents a new
	// error on every call would otherwise never end.
	maxCauseLinks = 64
)

// boundary wraps every call into the trusted service. The service's errors
// can name hidden sessions, paths and causes, so none reaches the model
// verbatim: each is logged in full and replaced by a fixed error.
type boundary struct {
	svc Service
	log *slog.Logger
}

// call runs fn under the boundary. Cancellation wins over everything,
// including a simultaneous service failure, and returns ctx's cause
// untouched and unlogged: it is the caller's own signal, not a finding.
func call[T any](ctx context.Context, b *boundary, op string, fn func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	if ctx.Err() != nil {
		return zero, context.Cause(ctx)
	}
	v, err := guarded(ctx, fn)
	if ctx.Err() != nil {
		return zero, context.Cause(ctx)
	}
	if err != nil {
		return zero, b.sanitize(ctx, op, err)
	}
	return v, nil
}

// panicError carries a recovered service panic into the sanitizer.
type panicError struct{ value any }

func (p *panicError) Error() string {
	return fmt.Sprintf("session query service panicked: %v", p.value)
}

func guarded[T any](ctx context.Context, fn func(ctx context.Context) (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r}
		}
	}()
	return fn(ctx)
}

// safeModelErrors maps a service code to what the model may see. Codes
// whose messages carry ids or configuration (SOURCE_CONFLICT,
// INVALID_CONFIG) are deliberately absent and so become the generic error.
var safeModelErrors = map[string]string{
	sq.CodeAborted:           "session query was cancelled",
	sq.CodeCorruptSession:    "session event history is corrupt",
	sq.CodeEventNotFound:     "session event was not found",
	sq.CodeIndexFailed:       "session search index is unavailable",
	sq.CodeInvalidCursor:     "session search continuation is invalid",
	sq.CodeInvalidFilter:     "session query filters were rejected",
	sq.CodeInvalidLimit:      "session query result limit was rejected",
	sq.CodeInvalidQuery:      "session query was rejected",
	sq.CodeInvalidLineage:    "session lineage is invalid",
	sq.CodeInvalidSurface:    "session event history is invalid",
	sq.CodeInvalidWindow:     "session event window is invalid",
	sq.CodePersistenceFailed: "session history storage is unavailable",
	sq.CodeSearchDisabled:    "session search is disabled in this deployment",
	sq.CodeSessionNotFound:   "session was not found",
	sq.CodeStaleCursor:       "session history changed while paging; retry the complete search call",
}

// sanitize logs err in full and returns the fresh error the model may see:
// the fixed error of a safe service code, a fresh UNAUTHORIZED, or the
// generic SESSION_QUERY_TOOL_FAILED. A panic while rendering yields the
// placeholder diagnostic; a panic while logging or classifying, or a
// logger that fails, yields the generic error, even for a safe code.
func (b *boundary) sanitize(ctx context.Context, op string, err error) (out error) {
	diagnostic := renderDiagnostic(err)
	defer func() {
		if recover() != nil {
			out = toolFailed()
		}
	}()
	if !b.warn(ctx, "tool-session-query: "+op+" failed: "+diagnostic) {
		return toolFailed()
	}
	return classify(err)
}

// warn hands the record straight to the handler, because slog.Logger
// discards handler errors and a logger that cannot record the failure must
// not let its detail be trusted either.
func (b *boundary) warn(ctx context.Context, msg string) bool {
	h := b.log.Handler()
	if !h.Enabled(ctx, slog.LevelWarn) {
		return true
	}
	return h.Handle(ctx, slog.NewRecord(time.Now(), slog.LevelWarn, msg, 0)) == nil
}

// classify looks at err itself, never at its causes, as the design does: a
// safe code wrapped by something else (fmt.Errorf("...: %w"), errors.Join)
// is no longer the service's own classified failure, so it becomes the
// generic error. The service returns its *sq.Error values unwrapped.
func classify(err error) error {
	if typed, ok := err.(*sq.Error); ok && typed != nil {
		if msg, ok := safeModelErrors[typed.Code]; ok {
			return &sq.Error{Code: typed.Code, Message: msg}
		}
	}
	if coded, ok := err.(tools.Coded); ok && !isNilPointer(err) && coded.ErrorCode() == CodeUnauthorized {
		return unauthorized()
	}
	return toolFailed()
}

// codeOf returns the code of a sanitized error.
func codeOf(err error) string {
	if c, ok := err.(tools.Coded); ok {
		return c.ErrorCode()
	}
	return CodeToolFailed
}

// renderDiagnostic renders err and its causes (Unwrap and errors.Join
// branches, depth first) joined by "\nCaused by: ", marking a cause seen
// before as circular. Any panic makes the whole diagnostic the placeholder.
func renderDiagnostic(err error) (out string) {
	defer func() {
		if recover() != nil {
			out = unprintable
		}
	}()
	if err == nil {
		return "<nil>"
	}
	var parts []string
	cyclic, truncated := walkCauses(err, func(e error) bool {
		parts = append(parts, describeError(e))
		return true
	})
	if cyclic {
		parts = append(parts, circularCause)
	}
	if truncated {
		parts = append(parts, truncatedCause)
	}
	return strings.Join(parts, "\nCaused by: ")
}

// walkCauses visits err and its causes depth first until visit returns
// false; only the diagnostic uses it. Unlike errors.As it survives cyclic chains: a cause already seen is
// not revisited (cyclic reports one), and at most maxCauseLinks errors are
// visited (truncated reports more).
func walkCauses(err error, visit func(error) bool) (cyclic, truncated bool) {
	seen := map[any]bool{}
	stack := []error{err}
	visited := 0
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e == nil {
			continue
		}
		if v := reflect.ValueOf(e); v.Comparable() {
			if seen[e] {
				cyclic = true
				continue
			}
			seen[e] = true
		}
		if visited == maxCauseLinks {
			return cyclic, true
		}
		visited++
		if !visit(e) {
			return cyclic, false
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			causes := u.Unwrap()
			for i := len(causes) - 1; i >= 0; i-- {
				stack = append(stack, causes[i])
			}
		case interface{ Unwrap() error }:
			stack = append(stack, u.Unwrap())
		}
	}
	return cyclic, false
}

// describeError renders one link as "<name>: <message>": the error's own
// name when it has one (SessionQueryError, HarnessError), "Error" for the
// standard library's anonymous errors, else its Go type.
func describeError(e error) string {
	name := ""
	if n, ok := e.(interface{ ErrorName() string }); ok {
		name = n.ErrorName()
	}
	if name == "" {
		t := reflect.TypeOf(e)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.PkgPath() {
		case "errors", "fmt":
			name = "Error"
		default:
			name = reflect.TypeOf(e).String()
		}
	}
	return name + ": " + e.Error()
}

func isNilPointer(e error) bool {
	v := reflect.ValueOf(e)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
