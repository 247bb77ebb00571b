package session

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func validHeader() Header {
	return Header{Version: 0, ID: "s1", CreatedAt: 1700000000000, Cwd: Ptr("/work/proj"), DelegationDepth: Ptr(0)}
}

func requestHeaderEv(seq int, data string) Event {
	return Event{Type: TypeRequestHeader, Seq: seq, Time: 1, Data: json.RawMessage(data)}
}

func validLog() []Event {
	return []Event{
		logEv(0, TypeTurnStart, TurnStart{Turn: 1}),
		logEv(1, TypeStepStart, StepBoundary{Turn: 1, Step: 1}),
		userEv(2, "hello"),
		requestHeaderEv(3, `{"header":{"config":{"provider":"deepseek","model":"deepseek-v4-flash","reasoningEffort":"high"},"adapterDefaults":{"reasoningEffort":true},"system":"sys"},"reason":"initial"}`),
		logEv(4, TypeAssistantChunk, AssistantChunk{Turn: 1, Step: 1, Chunk: []byte(`{"type":"text-delta","text":"hi"}`)}),
		assistantEv(5, "hi", src(4)),
		toolResultEv(6, "c1", "out"),
		logEv(7, TypeStepEnd, StepBoundary{Turn: 1, Step: 1}),
		logEv(8, TypeTurnEnd, TurnEnd{Turn: 1, Reason: TurnEndReason{Kind: EndCompleted}}),
		{Type: "plugin/custom", Seq: 9, Time: -5, Data: json.RawMessage(`null`), Ignorable: Ptr(true)},
	}
}

func TestValidateLogAcceptsAWellFormedLog(t *testing.T) {
	f, err := ValidateLogFold(validHeader(), validLog())
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != 10 || f.Surface(5) != SurfaceCurrent {
		t.Fatalf("fold = %d events, surface(5) %s", f.Len(), f.Surface(5))
	}
	if err := ValidateLog(validHeader(), nil); err != nil {
		t.Fatalf("empty log: %v", err)
	}
}

func TestValidateHeaderRules(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Header)
		id    string
		field string
		msg   string
	}{
		{"version", func(h *Header) { h.Version = 1 }, "s1", "version", "session header version must be 0, got 1"},
		{"empty id", func(h *Header) { h.ID = "" }, "", "id", "session header id must not be empty"},
		{"id mismatch", nil, "other", "id", `session header id "s1" does not match session id "other"`},
		{"negative createdAt", func(h *Header) { h.CreatedAt = -1 }, "s1", "createdAt", "session header createdAt must be a non-negative safe integer, got -1"},
		{"unsafe createdAt", func(h *Header) { h.CreatedAt = MaxSafeInteger + 1 }, "s1", "createdAt", "session header createdAt must be a non-negative safe integer, got 9007199254740992"},
		{"relative cwd", func(h *Header) { h.Cwd = Ptr("proj") }, "s1", "cwd", `session header cwd must be an absolute path, got "proj"`},
		{"empty cwd", func(h *Header) { h.Cwd = Ptr("") }, "s1", "cwd", `session header cwd must be an absolute path, got ""`},
		{"empty parent", func(h *Header) { h.ParentSession = Ptr("") }, "s1", "parentSession", "session header parentSession must not be empty when present"},
		{"negative seedLength", func(h *Header) { h.SeedLength = Ptr(-1) }, "s1", "seedLength", "session header seedLength must be a non-negative safe integer, got -1"},
		{"negative delegationDepth", func(h *Header) { h.DelegationDepth = Ptr(-2) }, "s1", "delegationDepth", "session header delegationDepth must be a non-negative safe integer, got -2"},
		{"unsafe delegationDepth", func(h *Header) { h.DelegationDepth = Ptr(MaxSafeInteger + 1) }, "s1", "delegationDepth", "session header delegationDepth must be a non-negative safe integer, got 9007199254740992"},
		{"origin other than subagent", func(h *Header) { h.Origin = Ptr("fork") }, "s1", "origin", `session header origin must be "subagent", got "fork"`},
		{"empty owner", func(h *Header) { h.Owner = Ptr("") }, "s1", "owner", "session header owner must be a non-empty string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := validHeader()
			if tc.edit != nil {
				tc.edit(&h)
			}
			err := ValidateHeader(h, tc.id)
			var he *HeaderError
			if !errors.As(err, &he) || he.Field != tc.field || he.Message != tc.msg {
				t.Fatalf("ValidateHeader = %#v, want field %s %q", err, tc.field, tc.msg)
			}
			if err := ValidateLog(h, validLog()); err == nil && tc.id == h.ID {
				t.Fatal("ValidateLog accepted the invalid header")
			}
		})
	}
	full := validHeader()
	full.ParentSession, full.SeedLength, full.Origin, full.AgentPreset, full.Owner = Ptr("p"), Ptr(3), Ptr("subagent"), Ptr("code"), Ptr("alice")
	if err := ValidateHeader(full, "s1"); err != nil {
		t.Fatalf("full header: %v", err)
	}
	bare := Header{ID: "s1"}
	if err := ValidateHeader(bare, "s1"); err != nil {
		t.Fatalf("minimal header: %v", err)
	}
}

// session-query.md §7.B item 25.
func TestValidateLogReportsASeqGapAsASeedError(t *testing.T) {
	events := []Event{userEv(1, "a")}
	err := ValidateLog(validHeader(), events)
	if err == nil || !strings.Contains(err.Error(), "seed event at index 0 has seq 1") {
		t.Fatalf("ValidateLog = %v, want the seed seq message", err)
	}
	var le *LogError
	if !errors.As(err, &le) || le.Index != 0 || errors.As(err, new(*FoldError)) {
		t.Fatalf("error = %#v, want a *LogError without a fold cause", err)
	}
}

func TestValidateLogRejectsMalformedEnvelopesAndShapes(t *testing.T) {
	replaceData := func(e Event, data string) Event { e.Data = json.RawMessage(data); return e }
	tr := func(data string) Event { return replaceData(toolResultEv(0, "c1", "x"), data) }
	cases := []struct {
		name  string
		event Event
		msg   string
	}{
		{"empty type", Event{Seq: 0, Data: json.RawMessage(`{}`)}, "seed event at index 0 has an invalid event envelope: type is empty"},
		{"missing data", Event{Type: "x", Seq: 0}, "seed event at index 0 has an invalid event envelope: data is missing"},
		{"unsafe time", Event{Type: "x", Seq: 0, Time: MaxSafeInteger + 1, Data: json.RawMessage(`{}`)}, "seed event at index 0 has an invalid event envelope: time 9007199254740992 is not a safe integer"},
		{"ignorable false", Event{Type: "x", Seq: 0, Data: json.RawMessage(`{}`), Ignorable: Ptr(false)}, "seed event at index 0 has an invalid event envelope: ignorable must be true when present"},
		{"legacy header delta", Event{Type: "request/header-delta", Seq: 0, Data: json.RawMessage(`{}`)}, "seed event at index 0 uses the unsupported legacy request/header-delta format"},
		{"user message without id", replaceData(userEv(0, "a"), `{"content":[],"source":{"kind":"user"},"role":"user"}`), "seed user/message at index 0 lacks an identified message"},
		{"user message not an object", replaceData(userEv(0, "a"), `"hello"`), "seed user/message at index 0 lacks an identified message"},
		{"user message with assistant role", replaceData(userEv(0, "a"), `{"content":[],"source":{"kind":"user"},"role":"assistant","id":"m"}`), `seed user/message at index 0 message must have role "user"`},
		{"user message with no source kind", replaceData(userEv(0, "a"), `{"content":[],"source":{},"role":"user","id":"m"}`), "seed user/message at index 0 message has invalid source"},
		{"user message with string content", replaceData(userEv(0, "a"), `{"content":"hi","source":{"kind":"user"},"role":"user","id":"m"}`), "seed user/message at index 0 message has invalid content"},
		{"user message with an undecodable block", replaceData(userEv(0, "a"), `{"content":[{"type":"text"}],"source":{"kind":"user"},"role":"user","id":"m"}`), "seed user/message at index 0 data does not decode: text block has no text"},
		{"assistant without message", replaceData(assistantEv(0, "a"), `{"turn":1,"step":1}`), "seed assistant/message at index 0 lacks an identified message"},
		{"assistant with user role", replaceData(assistantEv(0, "a"), `{"turn":1,"step":1,"message":{"role":"user","content":[],"source":{"kind":"model","provider":"p","model":"m"},"id":"a"}}`), `seed assistant/message at index 0 message must have role "assistant"`},
		{"assistant with plugin source", replaceData(assistantEv(0, "a"), `{"turn":1,"step":1,"message":{"role":"assistant","content":[],"source":{"kind":"plugin","plugin":"x"},"id":"a"}}`), "seed assistant/message at index 0 message must have model source"},
		{"assistant without model", replaceData(assistantEv(0, "a"), `{"turn":1,"step":1,"message":{"role":"assistant","content":[],"source":{"kind":"model","provider":"p"},"id":"a"}}`), "seed assistant/message at index 0 message must have model source"},
		{"assistant with a string turn", replaceData(assistantEv(0, "a"), `{"turn":"1","step":1,"message":{"role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"},"id":"a"}}`), "seed assistant/message at index 0 data does not decode: …"},
		{"tool result with user source", tr(`{"turn":1,"step":1,"message":{"content":[{"type":"tool-result","toolCallId":"c1","content":[],"isError":false}],"source":{"kind":"user"},"role":"user","id":"r"}}`), "seed tool/result at index 0 message must have tool source"},
		{"tool result with two blocks", tr(`{"turn":1,"step":1,"message":{"content":[{"type":"tool-result","toolCallId":"c1","content":[],"isError":false},{"type":"text","text":"x"}],"source":{"kind":"tool","callId":"c1"},"role":"user","id":"r"}}`), "seed tool/result at index 0 message must contain one tool-result block"},
		{"tool result with a text block", tr(`{"turn":1,"step":1,"message":{"content":[{"type":"text","text":"x"}],"source":{"kind":"tool","callId":"c1"},"role":"user","id":"r"}}`), "seed tool/result at index 0 message must contain one tool-result block"},
		{"tool result with string content", tr(`{"turn":1,"step":1,"message":{"content":[{"type":"tool-result","toolCallId":"c1","content":"x","isError":false}],"source":{"kind":"tool","callId":"c1"},"role":"user","id":"r"}}`), "seed tool/result at index 0 message must contain one tool-result block"},
		{"tool result with mismatched ids", tr(`{"turn":1,"step":1,"message":{"content":[{"type":"tool-result","toolCallId":"c2","content":[],"isError":false}],"source":{"kind":"tool","callId":"c1"},"role":"user","id":"r"}}`), "seed tool/result at index 0 message has mismatched tool call ids"},
		{"request header without model", requestHeaderEv(0, `{"header":{"config":{"provider":"deepseek"}},"reason":"initial"}`), "seed request/header at index 0 lacks provider/model"},
		{"request header without header", requestHeaderEv(0, `{"reason":"initial"}`), "seed request/header at index 0 lacks provider/model"},
		{"request header with empty effort", requestHeaderEv(0, `{"header":{"config":{"provider":"p","model":"m","reasoningEffort":""}},"reason":"initial"}`), "seed request/header at index 0 has an invalid reasoningEffort"},
		{"adapter default without its value", requestHeaderEv(0, `{"header":{"config":{"provider":"p","model":"m"},"adapterDefaults":{"maxTokens":true}},"reason":"initial"}`), "seed request/header at index 0 has invalid adapterDefaults"},
		{"adapter default marked false", requestHeaderEv(0, `{"header":{"config":{"provider":"p","model":"m","maxTokens":8},"adapterDefaults":{"maxTokens":false}},"reason":"initial"}`), "seed request/header at index 0 has invalid adapterDefaults"},
		{"unknown adapter default", requestHeaderEv(0, `{"header":{"config":{"provider":"p","model":"m"},"adapterDefaults":{"temperature":true}},"reason":"initial"}`), "seed request/header at index 0 has invalid adapterDefaults"},
		{"legacy fallback reason", requestHeaderEv(0, `{"header":{"config":{"provider":"p","model":"m"}},"reason":"fallback"}`), `seed request/header at index 0 uses the unsupported legacy request/header reason "fallback"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateLog(validHeader(), []Event{tc.event})
			var le *LogError
			if !errors.As(err, &le) || le.Index != 0 {
				t.Fatalf("ValidateLog = %v, want a *LogError at index 0", err)
			}
			match := le.Message == tc.msg
			if prefix, ok := strings.CutSuffix(tc.msg, "…"); ok {
				match = strings.HasPrefix(le.Message, prefix)
			}
			if !match {
				t.Fatalf("ValidateLog =\n  %v\nwant\n  %s", err, tc.msg)
			}
		})
	}
}

func TestValidateLogWrapsSurfaceViolationsWithTheFoldError(t *testing.T) {
	events := []Event{userEv(0, "a"), userEv(1, "b"), userEv(2, "c", replace(0, 1), src(0))}
	err := ValidateLog(validHeader(), events)
	var fe *FoldError
	var le *LogError
	if !errors.As(err, &fe) || !errors.As(err, &le) {
		t.Fatalf("ValidateLog = %v, want a *LogError wrapping a *FoldError", err)
	}
	if le.Index != 2 || fe.Seq != 2 {
		t.Fatalf("index = %d, fold seq = %d", le.Index, fe.Seq)
	}
	want := `invalid seed event at index 2: session event 2 ("user/message") does not cite every shadowed surface node in sourceEventSeqs; missing 1`
	if err.Error() != want {
		t.Fatalf("message = %q\nwant      %q", err.Error(), want)
	}
}

// session-query.md §7.B item 46: a persisted surface event without surfaceOp.
func TestValidateLogRejectsASurfaceEventWithoutSurfaceOp(t *testing.T) {
	err := ValidateLog(validHeader(), []Event{userEv(0, "a", op(""))})
	if !errors.As(err, new(*FoldError)) {
		t.Fatalf("ValidateLog = %v, want a fold violation", err)
	}
}

func TestCompatibleAndSameSnapshotHeader(t *testing.T) {
	base := validHeader()
	cases := []struct {
		name           string
		edit           func(*Header)
		compat, sameSn bool
	}{
		{"identical", func(*Header) {}, true, true},
		{"absent depth equals zero", func(h *Header) { h.DelegationDepth = nil }, true, true},
		{"depth 1 versus 0", func(h *Header) { h.DelegationDepth = Ptr(1) }, false, false},
		{"different cwd", func(h *Header) { h.Cwd = Ptr("/other") }, false, false},
		{"absent cwd", func(h *Header) { h.Cwd = nil }, false, false},
		{"different createdAt", func(h *Header) { h.CreatedAt++ }, false, false},
		{"different id", func(h *Header) { h.ID = "s2" }, false, false},
		{"different version", func(h *Header) { h.Version = 1 }, false, false},
		{"parent added", func(h *Header) { h.ParentSession = Ptr("p") }, false, false},
		{"seedLength added", func(h *Header) { h.SeedLength = Ptr(0) }, false, false},
		{"origin ignored", func(h *Header) { h.Origin = Ptr("subagent") }, true, true},
		{"owner ignored", func(h *Header) { h.Owner = Ptr("alice") }, true, true},
		{"agentPreset only breaks the snapshot check", func(h *Header) { h.AgentPreset = Ptr("code") }, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			other := base.Clone()
			tc.edit(&other)
			if got := Compatible(base, other); got != tc.compat {
				t.Errorf("Compatible = %v, want %v", got, tc.compat)
			}
			if got := Compatible(other, base); got != tc.compat {
				t.Errorf("Compatible (swapped) = %v, want %v", got, tc.compat)
			}
			if got := SameSnapshotHeader(base, other); got != tc.sameSn {
				t.Errorf("SameSnapshotHeader = %v, want %v", got, tc.sameSn)
			}
		})
	}
}
