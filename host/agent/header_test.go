package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func TestSetModelLogsAHeaderChangeFromTheNextRequest(t *testing.T) {
	p := newFakeProvider(t, textReply("one"), textReply("two"))
	h := newHarness(t, p)
	h.prompt("first")
	h.agent.SetModel("m2", "low")
	if m, e := h.agent.Model(); m != "m2" || e != "low" {
		t.Errorf("Model() = %s, %s", m, e)
	}
	first := len(h.events())
	h.prompt("second")
	ev := h.events()[first:]
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "step/end", "turn/end")
	hdr := decode[session.RequestHeader](t, ev[3])
	if hdr.Reason != session.HeaderChange || hdr.Header.Config.Model != "m2" || hdr.Header.Config.ReasoningEffort != "low" {
		t.Errorf("changed header = %+v", hdr)
	}
	if got := string(ev[4].Data); got != `{"provider":"fake","model":"m2"}` {
		t.Errorf("request/context = %s", got)
	}
	am := decode[session.AssistantMessage](t, ofType(ev, session.TypeAssistantMessage)[0])
	if string(am.Message.Source) != `{"kind":"model","provider":"fake","model":"m2"}` {
		t.Errorf("assistant source = %s", am.Message.Source)
	}
	if got := p.requests()[1].Config; got.Model != "m2" || got.ReasoningEffort != "low" {
		t.Errorf("second request config = %+v", got)
	}
}

func TestAdapterDefaultsAreMarkedAndRematerializedAfterAModelSwitch(t *testing.T) {
	p := newFakeProvider(t, textReply("one"), textReply("two"))
	p.setModel(llm.ModelInfo{ID: "m1", ContextWindow: 100000, DefaultMaxTokens: 4096, DefaultEffort: "high"})
	p.setModel(llm.ModelInfo{ID: "m2", DefaultMaxTokens: 8192})
	h := newHarness(t, p)
	h.prompt("first")
	h.agent.SetModel("m2", "max")
	h.prompt("second")
	headers := ofType(h.events(), session.TypeRequestHeader)
	if len(headers) != 2 {
		t.Fatalf("%d headers", len(headers))
	}
	if got, want := string(headers[0].Data), `{"header":{"config":{"provider":"fake","model":"m1","maxTokens":4096,"reasoningEffort":"high"},"adapterDefaults":{"reasoningEffort":true,"maxTokens":true}},"reason":"initial"}`; got != want {
		t.Errorf("initial header\n got %s\nwant %s", got, want)
	}
	if got, want := string(headers[1].Data), `{"header":{"config":{"provider":"fake","model":"m2","maxTokens":8192,"reasoningEffort":"max"},"adapterDefaults":{"maxTokens":true}},"reason":"change"}`; got != want {
		t.Errorf("changed header\n got %s\nwant %s", got, want)
	}
	contexts := ofType(h.events(), session.TypeRequestContext)
	if len(contexts) != 2 || string(contexts[0].Data) != `{"provider":"fake","model":"m1","contextWindow":100000}` ||
		string(contexts[1].Data) != `{"provider":"fake","model":"m2"}` {
		t.Errorf("request/context events = %s", dump(contexts))
	}
}

func TestRegisteringAToolChangesTheHeaderOfTheNextRequest(t *testing.T) {
	reg := tools.NewRegistry(nil)
	p := newFakeProvider(t, textReply("one"), textReply("two"))
	h := newHarness(t, p, withTools(reg))
	h.prompt("first")
	if _, err := reg.Register(&tools.Definition{Name: "late", Description: "added later", Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { return "", nil }}); err != nil {
		t.Fatal(err)
	}
	h.prompt("second")
	headers := ofType(h.events(), session.TypeRequestHeader)
	if len(headers) != 2 {
		t.Fatalf("%d headers", len(headers))
	}
	second := decode[session.RequestHeader](t, headers[1])
	if second.Reason != session.HeaderChange || len(second.Header.Tools) != 1 {
		t.Errorf("second header = %+v", second)
	}
	if got := string(second.Header.Tools[0]); got != `{"name":"late","description":"added later","parameters":{"type":"object","properties":{}}}` {
		t.Errorf("tool schema = %s", got)
	}
}

func TestHeadersEqualComparesFieldWise(t *testing.T) {
	base := session.EpochHeader{
		Config: session.CallConfig{Provider: "p", Model: "m", MaxTokens: session.Ptr(10)},
		System: "sys",
		Tools:  []json.RawMessage{json.RawMessage(`{"name":"a"}`)},
	}
	mod := func(fn func(*session.EpochHeader)) session.EpochHeader {
		h := base
		h.Config.MaxTokens = session.Ptr(*base.Config.MaxTokens)
		h.Tools = append([]json.RawMessage(nil), base.Tools...)
		fn(&h)
		return h
	}
	cases := []struct {
		name  string
		other session.EpochHeader
		equal bool
	}{
		{"identical", mod(func(*session.EpochHeader) {}), true},
		{"tool bytes differ only in spacing", mod(func(h *session.EpochHeader) { h.Tools[0] = json.RawMessage(`{ "name": "a" }`) }), true},
		{"no adapter defaults equals all-false flags", mod(func(h *session.EpochHeader) { h.AdapterDefaults = &session.AdapterDefaults{} }), true},
		{"model", mod(func(h *session.EpochHeader) { h.Config.Model = "n" }), false},
		{"max tokens", mod(func(h *session.EpochHeader) { h.Config.MaxTokens = session.Ptr(11) }), false},
		{"max tokens absent", mod(func(h *session.EpochHeader) { h.Config.MaxTokens = nil }), false},
		{"effort", mod(func(h *session.EpochHeader) { h.Config.ReasoningEffort = "high" }), false},
		{"defaults flag", mod(func(h *session.EpochHeader) { h.AdapterDefaults = &session.AdapterDefaults{MaxTokens: true} }), false},
		{"system", mod(func(h *session.EpochHeader) { h.System = "other" }), false},
		{"tool order", mod(func(h *session.EpochHeader) {
			h.Tools = []json.RawMessage{json.RawMessage(`{"name":"b"}`), json.RawMessage(`{"name":"a"}`)}
		}), false},
		{"tool removed", mod(func(h *session.EpochHeader) { h.Tools = nil }), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := headersEqual(base, c.other); got != c.equal {
				t.Errorf("headersEqual = %v, want %v", got, c.equal)
			}
		})
	}
}
