package sessionquery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func newBoundary(log *logRecorder) *boundary {
	return &boundary{log: slog.New(log)}
}

// sanitized runs the sanitizer and returns the model-facing code and
// message plus the log.
func sanitized(t *testing.T, err error) (code, msg, logged string) {
	t.Helper()
	rec := &logRecorder{}
	out := newBoundary(rec).sanitize(context.Background(), "event read", err)
	var c tools.Coded
	if !errors.As(out, &c) {
		t.Fatalf("sanitized error %T is not coded", out)
	}
	if errors.Unwrap(out) != nil {
		t.Fatalf("sanitized error keeps a cause: %v", errors.Unwrap(out))
	}
	return c.ErrorCode(), out.Error(), rec.text()
}

func TestSanitizerMapsServiceCodesThroughTheFixedTable(t *testing.T) {
	want := map[string][2]string{
		sq.CodeAborted:           {sq.CodeAborted, "session query was cancelled"},
		sq.CodeCorruptSession:    {sq.CodeCorruptSession, "session event history is corrupt"},
		sq.CodeEventNotFound:     {sq.CodeEventNotFound, "session event was not found"},
		sq.CodeIndexFailed:       {sq.CodeIndexFailed, "session search index is unavailable"},
		sq.CodeInvalidConfig:     {CodeToolFailed, "session query operation failed"},
		sq.CodeInvalidCursor:     {sq.CodeInvalidCursor, "session search continuation is invalid"},
		sq.CodeInvalidFilter:     {sq.CodeInvalidFilter, "session query filters were rejected"},
		sq.CodeInvalidLimit:      {sq.CodeInvalidLimit, "session query result limit was rejected"},
		sq.CodeInvalidQuery:      {sq.CodeInvalidQuery, "session query was rejected"},
		sq.CodeInvalidLineage:    {sq.CodeInvalidLineage, "session lineage is invalid"},
		sq.CodeInvalidSurface:    {sq.CodeInvalidSurface, "session event history is invalid"},
		sq.CodeInvalidWindow:     {sq.CodeInvalidWindow, "session event window is invalid"},
		sq.CodePersistenceFailed: {sq.CodePersistenceFailed, "session history storage is unavailable"},
		sq.CodeSearchDisabled:    {sq.CodeSearchDisabled, "session search is disabled in this deployment"},
		sq.CodeSessionNotFound:   {sq.CodeSessionNotFound, "session was not found"},
		sq.CodeStaleCursor:       {sq.CodeStaleCursor, "session history changed while paging; retry the complete search call"},
		sq.CodeSourceConflict:    {CodeToolFailed, "session query operation failed"},
	}
	if len(want) != len(sq.Codes) {
		t.Fatalf("table covers %d codes, the service has %d", len(want), len(sq.Codes))
	}
	for _, code := range sq.Codes {
		secret := fmt.Sprintf(`session "hidden-%s" under /secret/path`, code)
		in := sq.Wrap(code, errors.New("cause-secret"), "%s", secret)
		gotCode, gotMsg, logged := sanitized(t, in)
		if w := want[code]; gotCode != w[0] || gotMsg != w[1] {
			t.Errorf("%s -> %s %q, want %s %q", code, gotCode, gotMsg, w[0], w[1])
		}
		wantLog := "tool-session-query: event read failed: SessionQueryError: " + secret + "\nCaused by: Error: cause-secret"
		if logged != wantLog {
			t.Errorf("%s logged %q, want %q", code, logged, wantLog)
		}
	}
}

func TestSanitizerReturnsAFreshErrorEveryTime(t *testing.T) {
	b := newBoundary(&logRecorder{})
	in := sq.Errorf(sq.CodeEventNotFound, "x")
	a1, a2 := b.sanitize(context.Background(), "op", in), b.sanitize(context.Background(), "op", in)
	if a1 == a2 || a1 == error(in) {
		t.Fatal("sanitizer reused an error value")
	}
	g1, g2 := b.sanitize(context.Background(), "op", errors.New("x")), b.sanitize(context.Background(), "op", errors.New("y"))
	if g1 == g2 {
		t.Fatal("generic failure is a shared value")
	}
}

func TestSanitizerHostileErrors(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		code      string
		msg       string
		logHas    []string
		logHasNot []string
	}{
		{"plain error", errors.New("plain secret"), CodeToolFailed, msgToolFailed,
			[]string{"Error: plain secret"}, nil},
		{"other harness error", &codedError{code: "SOME_CODE", msg: "harness secret"}, CodeToolFailed, msgToolFailed,
			[]string{"HarnessError: harness secret"}, nil},
		{"unauthorized harness error", &codedError{code: CodeUnauthorized, msg: "inner secret"}, CodeUnauthorized, msgUnauthorized,
			[]string{"inner secret"}, nil},
		{"unknown typed code", &sq.Error{Code: "__proto__", Message: "proto secret"}, CodeToolFailed, msgToolFailed,
			[]string{"proto secret"}, nil},
		{"empty typed code", &sq.Error{Code: "", Message: "empty code secret"}, CodeToolFailed, msgToolFailed,
			[]string{"empty code secret"}, nil},
		{"tool code on a typed error", &sq.Error{Code: CodeToolFailed, Message: "m"}, CodeToolFailed, msgToolFailed, nil, nil},
		{"panicking Error method", panickyError{}, CodeToolFailed, msgToolFailed,
			[]string{unprintable}, []string{"secret-from-panicking-error-method"}},
		{"panicking Unwrap", &panickyUnwrap{msg: "outer"}, CodeToolFailed, msgToolFailed,
			[]string{unprintable}, []string{"outer", "secret-from-unwrap"}},
		{"panicking code getter", &panickyCode{msg: "code secret"}, CodeToolFailed, msgToolFailed,
			[]string{"HostileError: code secret"}, []string{"secret-from-code-getter"}},
		{"typed error with unprintable cause", sq.Wrap(sq.CodePersistenceFailed, panickyError{}, "storage secret"),
			sq.CodePersistenceFailed, "session history storage is unavailable", []string{unprintable}, []string{"storage secret"}},
		{"cyclic cause chain", newCycle("first secret", "second secret"), CodeToolFailed, msgToolFailed,
			[]string{"first secret", "\nCaused by: ", "second secret", circularCause}, nil},
		// The design classifies the top-level error only: a safe code
		// behind a wrapper is sanitized to the generic failure.
		{"typed error wrapped by fmt", fmt.Errorf("context: %w", sq.Errorf(sq.CodeInvalidWindow, "window secret")),
			CodeToolFailed, msgToolFailed, []string{"Error: context: window secret", "SessionQueryError: window secret"}, nil},
		{"unauthorized wrapped by fmt", fmt.Errorf("context: %w", &codedError{code: CodeUnauthorized, msg: "inner secret"}),
			CodeToolFailed, msgToolFailed, []string{"inner secret"}, nil},
		{"joined errors", errors.Join(errors.New("left secret"), sq.Errorf(sq.CodeSourceConflict, "conflict secret")),
			CodeToolFailed, msgToolFailed, []string{"left secret", "conflict secret"}, nil},
		{"typed nil pointer", (*sq.Error)(nil), CodeToolFailed, msgToolFailed, []string{unprintable}, nil},
		{"service panic", &panicError{value: "panic secret"}, CodeToolFailed, msgToolFailed, []string{"panic secret"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, msg, logged := sanitized(t, tc.err)
			if code != tc.code || msg != tc.msg {
				t.Fatalf("sanitized to %s %q, want %s %q", code, msg, tc.code, tc.msg)
			}
			if !strings.HasPrefix(logged, "tool-session-query: event read failed: ") {
				t.Fatalf("log = %q", logged)
			}
			mustContain(t, "log", logged, tc.logHas...)
			mustNotContain(t, "log", logged, tc.logHasNot...)
		})
	}
}

func TestSanitizerLongCauseChainIsTruncated(t *testing.T) {
	var err error = errors.New("root")
	for i := range 200 {
		err = fmt.Errorf("level %d: %w", i, err)
	}
	_, _, logged := sanitized(t, err)
	if n := strings.Count(logged, "Caused by: "); n != maxCauseLinks {
		t.Fatalf("%d causes rendered, want %d", n, maxCauseLinks)
	}
	mustContain(t, "log", logged, truncatedCause)
}

func TestFailingOrPanickingLoggerYieldsTheGenericError(t *testing.T) {
	for _, rec := range []*logRecorder{{fail: errors.New("disk full")}, {panicWith: "logger exploded"}} {
		out := newBoundary(rec).sanitize(context.Background(), "event read", sq.Errorf(sq.CodeEventNotFound, "safe"))
		if codeOf(out) != CodeToolFailed || out.Error() != msgToolFailed {
			t.Fatalf("with a broken logger: %v", out)
		}
		if rec.count() != 1 {
			t.Fatalf("logger called %d times, want 1", rec.count())
		}
	}
}

func TestDisabledWarnLevelIsNotAFailure(t *testing.T) {
	b := &boundary{log: slog.New(slog.NewTextHandler(failingWriter{}, &slog.HandlerOptions{Level: slog.LevelError}))}
	out := b.sanitize(context.Background(), "event read", sq.Errorf(sq.CodeEventNotFound, "safe"))
	if codeOf(out) != sq.CodeEventNotFound {
		t.Fatalf("sanitized = %v", out)
	}
	b = &boundary{log: slog.New(slog.NewTextHandler(failingWriter{}, nil))}
	if out := b.sanitize(context.Background(), "event read", sq.Errorf(sq.CodeEventNotFound, "safe")); codeOf(out) != CodeToolFailed {
		t.Fatalf("a handler whose writer fails must yield the generic error, got %v", out)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("write failed") }

func TestBoundaryCancellationWinsAndIsNotLogged(t *testing.T) {
	rec := &logRecorder{}
	b := newBoundary(rec)
	ctx, cancel := context.WithCancelCause(context.Background())
	reason := errors.New("exact reason")
	_, err := call(ctx, b, "event read", func(context.Context) (int, error) {
		cancel(reason)
		return 0, sq.Errorf(sq.CodeInvalidLineage, `session lineage contains a cycle at "hidden"`)
	})
	if err != reason {
		t.Fatalf("err = %v, want the exact cancellation cause", err)
	}
	if rec.count() != 0 {
		t.Fatalf("cancellation was logged: %s", rec.text())
	}
	called := false
	_, err = call(ctx, b, "event read", func(context.Context) (int, error) { called = true; return 1, nil })
	if err != reason || called {
		t.Fatalf("pre-cancelled call: err=%v called=%v", err, called)
	}
}

func TestBoundaryRecoversServicePanics(t *testing.T) {
	rec := &logRecorder{}
	_, err := call(context.Background(), newBoundary(rec), "event read", func(context.Context) (int, error) {
		panic("panic with /secret/path")
	})
	if codeOf(err) != CodeToolFailed || err.Error() != msgToolFailed {
		t.Fatalf("err = %v", err)
	}
	mustContain(t, "log", rec.text(), "panic with /secret/path")
}
