package sessionquery

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/session/sessiontest"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// logRecorder is a slog.Handler keeping every message. fail makes Handle
// return an error; panicWith makes it panic.
type logRecorder struct {
	mu        sync.Mutex
	msgs      []string
	calls     int
	fail      error
	panicWith any
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.calls++
	l.msgs = append(l.msgs, r.Message)
	fail, p := l.fail, l.panicWith
	l.mu.Unlock()
	if p != nil {
		panic(p)
	}
	return fail
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.msgs, "\n")
}

func (l *logRecorder) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// harness is a tool registry with the plugin's tools mounted over svc.
type harness struct {
	reg     *tools.Registry
	prompts *prompt.Registry
	log     *logRecorder
	dispose host.Dispose
}

func newHarness(t *testing.T, svc Service, cfg Config) *harness {
	t.Helper()
	h := &harness{reg: tools.NewRegistry(nil), prompts: prompt.NewRegistry(), log: &logRecorder{}}
	dispose, err := mount(h.reg, h.prompts, svc, cfg, slog.New(h.log))
	if err != nil {
		t.Fatal(err)
	}
	h.dispose = dispose
	t.Cleanup(func() { _ = dispose() })
	return h
}

// run executes one call through the whole pipeline (schema validation
// included) as the agent owning caller.
func (h *harness) run(ctx context.Context, caller *session.Live, tool, arguments string) tools.Result {
	return h.reg.Run(ctx, &tools.Call{CallID: "call-1", Name: tool, Arguments: arguments, Session: caller})
}

// outcome is the part of a result the tests pin.
type outcome struct {
	IsError bool
	Text    string
	Code    string
}

func outcomeOf(t *testing.T, r tools.Result) outcome {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != session.BlockText {
		t.Fatalf("result content = %#v, want one text block", r.Content)
	}
	o := outcome{IsError: r.IsError, Text: r.Content[0].Text}
	if r.Error != nil {
		o.Code = r.Error.Code
	}
	return o
}

// expectError asserts an error outcome with code and exact message.
func expectError(t *testing.T, r tools.Result, code, msg string) {
	t.Helper()
	o := outcomeOf(t, r)
	if !o.IsError || o.Code != code || o.Text != "Error: "+msg {
		t.Fatalf("outcome = %+v, want error %s %q", o, code, "Error: "+msg)
	}
}

// expectText asserts a successful outcome with exactly text.
func expectText(t *testing.T, r tools.Result, text string) {
	t.Helper()
	o := outcomeOf(t, r)
	if o.IsError || o.Text != text {
		t.Fatalf("outcome:\n%s\n(isError=%v code=%s)\nwant:\n%s", o.Text, o.IsError, o.Code, text)
	}
}

func mustNotContain(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Fatalf("%s contains %q:\n%s", where, s, text)
		}
	}
}

func mustContain(t *testing.T, where, text string, parts ...string) {
	t.Helper()
	for _, s := range parts {
		if !strings.Contains(text, s) {
			t.Fatalf("%s does not contain %q:\n%s", where, s, text)
		}
	}
}

// Session fixtures. The workspace paths are fixed strings: the fake never
// touches the file system, and authorization compares strings exactly.
const (
	workspace = "/work/project"
	elsewhere = "/work/other"
)

func hdr(id string, createdAt int64, cwd string, parent string) session.Header {
	h := session.Header{Version: session.FormatVersion, ID: id, CreatedAt: createdAt}
	if cwd != "" {
		h.Cwd = &cwd
	}
	if parent != "" {
		h.ParentSession = &parent
	}
	return h
}

// ev builds a raw event at seq with time 1000+seq.
func ev(seq int, typ string, data any, opts ...session.AppendOption) session.Event {
	return sessiontest.Event(1000+int64(seq), seq, typ, data, opts...)
}

func userMsg(text string) session.Message { return sessiontest.UserText(text) }

func assistantMsg(text string) session.AssistantMessage {
	return session.AssistantMessage{Turn: 1, Step: 1, Message: session.Message{
		Role: session.RoleAssistant, Content: []session.ContentBlock{session.TextBlock(text)}, Source: session.ModelSource("fake", "m"), ID: "a",
	}}
}

// callerLive is the calling agent's session: a turn whose current step
// starts at seq 1, so a current-session search may see nothing but seq 0.
func callerLive(id, cwd string) *session.Live {
	return session.NewLive(hdr(id, 1, cwd, ""), []session.Event{
		ev(0, session.TypeTurnStart, session.TurnStart{Turn: 1}),
		ev(1, session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1}),
	}, session.LiveOptions{})
}

// liveWith returns a live session with exactly events.
func liveWith(h session.Header, events ...session.Event) *session.Live {
	return session.NewLive(h, events, session.LiveOptions{})
}

func jsonArgs(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cancelCause is the reason tests cancel executions with. It is Coded, so
// the pipeline reports it with its own code and text, which lets a test
// see that exactly this reason came back.
var cancelCause error = &tools.Error{Name: "AbortError", Code: "ABORTED", Message: "user cancelled the turn"}

func isCancelResult(r tools.Result) bool {
	return r.IsError && r.Error != nil && r.Error.Code == "ABORTED" && len(r.Content) == 1 &&
		r.Content[0].Text == "Error: user cancelled the turn"
}

// realService is the trusted service over the given live sessions, with no
// persistence mounted and no search engine.
func realService(t *testing.T, lives ...*session.Live) *sq.Service {
	t.Helper()
	reg := session.NewRegistry()
	for _, l := range lives {
		if err := reg.Attach(l); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := sq.New(sq.DefaultConfig(), reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

// spy records the calls made to svc.
func spy(t *testing.T, svc Service) *fakeService {
	f := newFake(t)
	f.fallback = svc
	return f
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newRegistryWith registers ts's tools on a fresh registry.
func newRegistryWith(tb testing.TB, ts *toolset) *tools.Registry {
	reg := tools.NewRegistry(nil)
	for _, d := range ts.definitions() {
		if _, err := reg.Register(d); err != nil {
			tb.Fatal(err)
		}
	}
	return reg
}
