package agent

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// persisted runs fn against an agent over a store-backed live session and
// closes both, as a process exiting cleanly would.
func persisted(t *testing.T, st *store.Store, p *fakeProvider, resume bool, model string, fn func(h *harness), opts ...func(*Options)) {
	t.Helper()
	var (
		w      *store.Writer
		hdr    session.Header
		events []session.Event
		err    error
	)
	if resume {
		w, hdr, events, err = st.Open(context.Background(), "sess-r")
	} else {
		hdr = session.Header{ID: "sess-r", CreatedAt: epoch.UnixMilli(), Cwd: session.Ptr(t.TempDir())}
		w, err = st.Create(hdr, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, provider: p, cwd: hdr.CwdOrEmpty()}
	h.live = session.NewLive(hdr, events, session.LiveOptions{Sink: w, Now: func() time.Time { return epoch }})
	o := Options{
		Live: h.live, Provider: p, Model: model, Resumed: resume,
		Now: func() time.Time { return epoch }, NewID: h.newID, Sleep: h.sleep, Rand: func() float64 { return 0.5 },
	}
	for _, fn := range opts {
		fn(&o)
	}
	h.agent, err = New(o)
	if err != nil {
		t.Fatal(err)
	}
	fn(h)
	if err := h.agent.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.live.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestResumedSessionContinuesWithAResumeHeader(t *testing.T) {
	st := store.New(t.TempDir(), store.Options{Log: slog.New(slog.DiscardHandler)})
	p := newFakeProvider(t, textReply("first answer"), textReply("second answer"))
	persisted(t, st, p, false, "m1", func(h *harness) { h.prompt("first question") })

	var first int
	persisted(t, st, p, true, "", func(h *harness) {
		first = len(h.events())
		// The model is taken from the persisted header.
		if m, _ := h.agent.Model(); m != "m1" {
			t.Errorf("resumed model = %q", m)
		}
		h.prompt("second question")
	})

	_, ev, err := st.Inspect(context.Background(), "sess-r")
	if err != nil {
		t.Fatal(err)
	}
	tail := ev[first:]
	// The header is a full "resume" snapshot although nothing changed; the
	// unchanged request/context is not repeated.
	expectTypes(t, tail, "turn/start", "step/start", "user/message", "request/header",
		"assistant/chunk*", "assistant/message", "step/end", "turn/end")
	if got := decode[session.TurnStart](t, tail[0]); got.Turn != 2 {
		t.Errorf("resumed turn number = %d", got.Turn)
	}
	hdrs := ofType(ev, session.TypeRequestHeader)
	if r := decode[session.RequestHeader](t, hdrs[1]); r.Reason != session.HeaderResume || !headersEqual(r.Header, decode[session.RequestHeader](t, hdrs[0]).Header) {
		t.Errorf("resume header = %+v", r)
	}
	if n := len(ofType(ev, session.TypeSessionTitle)); n != 1 {
		t.Errorf("%d titles after resume", n)
	}
	msgs := p.requests()[1].Messages
	if len(msgs) != 3 || session.JoinText(msgs[1].Content) != "first answer" {
		t.Errorf("resumed request history = %+v", msgs)
	}
	h, _, err := st.Inspect(context.Background(), "sess-r")
	if err != nil {
		t.Fatal(err)
	}
	if err := session.ValidateLog(h, ev); err != nil {
		t.Fatalf("resumed log: %v", err)
	}
}

func TestResumeAfterACrashMidToolCallGivesAValidHistory(t *testing.T) {
	st := store.New(t.TempDir(), store.Options{Log: slog.New(slog.DiscardHandler)})
	hdr := session.Header{ID: "sess-r", CreatedAt: epoch.UnixMilli(), Cwd: session.Ptr(t.TempDir())}
	w, err := st.Create(hdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := session.NewLive(hdr, nil, session.LiveOptions{Sink: w})
	appendAll := func(typ string, data any, opts ...session.AppendOption) {
		if _, err := live.Append(typ, data, opts...); err != nil {
			t.Fatal(err)
		}
	}
	appendAll(session.TypeTurnStart, session.TurnStart{Turn: 1})
	appendAll(session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1})
	appendAll(session.TypeUserMessage, UserText("run it", "u1"))
	appendAll(session.TypeAssistantMessage, session.AssistantMessage{Turn: 1, Step: 1, Message: session.Message{
		Role: session.RoleAssistant, Content: []session.ContentBlock{session.ToolCallBlock("c1", "bash", `{}`)},
		Source: session.ModelSource("fake", "m1"), ID: "a1",
	}}, session.WithSources())
	appendAll(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "bash", Arguments: `{}`})
	if err := live.Close(); err != nil { // the process dies mid-call
		t.Fatal(err)
	}

	p := newFakeProvider(t, textReply("recovered"))
	persisted(t, st, p, true, "m1", func(h *harness) { h.prompt("what happened?") })
	_, ev, err := st.Inspect(context.Background(), "sess-r")
	if err != nil {
		t.Fatal(err)
	}
	if err := session.ValidateLog(hdr, ev); err != nil {
		t.Fatalf("log after resume: %v", err)
	}
	msgs := p.requests()[0].Messages
	if len(msgs) != 4 || !strings.Contains(session.JoinText(msgs[2].Content[0].Content), "Error") {
		t.Errorf("history after crash repair = %+v", msgs)
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndCompleted || decode[session.TurnStart](t, ofType(ev, session.TypeTurnStart)[1]).Turn != 2 {
		t.Errorf("resumed turn ended %+v", r)
	}
}

func TestRecordedSettingsOutliveTheProcessForTheSameProvider(t *testing.T) {
	st := store.New(t.TempDir(), store.Options{Log: slog.New(slog.DiscardHandler)})
	p := newFakeProvider(t)
	persisted(t, st, p, false, "m1", func(h *harness) {
		h.agent.SetModel("m2", "high")
	}, func(o *Options) { o.Mode = func() string { return "accept-edits" } })
	_, ev, err := st.Inspect(context.Background(), "sess-r")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := session.LastSettings(ev); !ok || got != (session.Settings{Mode: "accept-edits", Provider: "fake", Model: "m2", ReasoningEffort: "high"}) {
		t.Fatalf("logged settings = %+v, %v", got, ok)
	}
	// The configured model (m1) does not win over the user's choice.
	persisted(t, st, p, true, "m1", func(h *harness) {
		if m, e := h.agent.Model(); m != "m2" || e != "high" {
			t.Errorf("resumed model = %q %q, want m2 high", m, e)
		}
	})
	other := &renamedProvider{fakeProvider: p, name: "other"}
	persisted(t, st, p, true, "m1", func(h *harness) {
		if m, e := h.agent.Model(); m != "m1" || e != "" {
			t.Errorf("another provider's session model = %q %q, want the configured m1", m, e)
		}
	}, func(o *Options) { o.Provider = other })
}

// renamedProvider is a fakeProvider under another route name.
type renamedProvider struct {
	*fakeProvider
	name string
}

func (p *renamedProvider) Name() string { return p.name }
