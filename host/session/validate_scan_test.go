package session

import (
	"encoding/json"
	"testing"
)

// quickShapeSeeds are well-formed surface payloads of every shape the
// writers produce, and a few they do not but the format allows.
func quickShapeSeeds() []Event {
	usage := &Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 2}
	raw := func(typ, data string) Event { return Event{Type: typ, Data: json.RawMessage(data)} }
	return []Event{
		userEv(0, "hello"),
		userEv(0, "ünïcode \"quoted\" \\ 数据库"),
		pluginUserEv(0, "summary"),
		assistantEv(0, "hi"),
		assistantEv(0, ""),
		build(0, TypeAssistantMessage, AssistantMessage{Turn: 3, Step: 2, Usage: usage, Interrupted: true, Message: assistantMsg(0,
			ReasoningBlock("think"), TextBlock("answer"), ToolCallBlock("c1", "bash", `{"cmd":"ls"}`))}, nil),
		toolResultEv(0, "c1", "out"),
		build(0, TypeToolResult, ToolResult{Turn: 1, Step: 1, Error: &ToolErrorInfo{Name: "bash", Code: "TIMEOUT"},
			Meta: json.RawMessage(`{"exit":1}`), Mutations: json.RawMessage(`[{"path":"/a"}]`), Message: Message{
				Role:    RoleUser,
				Content: []ContentBlock{ToolResultBlock("c1", []ContentBlock{TextBlock("a"), {Type: BlockImage, Raw: json.RawMessage(`{"type":"image","data":"AAAA"}`)}}, true)},
				Source:  ToolSource("c1"), ID: "r-c1",
			}}, nil),
		raw(TypeUserMessage, ` {"content":[{"type":"image","mime":"image/png"},{"type":"text","text":""}],"source":{"kind":"user","extra":[1,2]},"role":"user","id":"m","x":null} `),
		raw(TypeAssistantMessage, `{"turn":null,"message":{"role":"assistant","content":[{"type":"tool-call","id":"c","name":"n","arguments":{"a":1}}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a"},"usage":null,"interrupted":false}`),
		raw(TypeToolResult, `{"message":{"content":[{"type":"tool-result","toolCallId":"c\u0031","content":[{"type":"tool-result","content":"s"}],"isError":null}],"source":{"kind":"tool","callId":"c1"},"role":"user","id":"r"},"error":null}`),
	}
}

func TestQuickShapeAcceptsWellFormedPayloads(t *testing.T) {
	for i, e := range quickShapeSeeds() {
		if msg := checkMessageShape(e); msg != "" {
			t.Fatalf("seed %d is not well formed: %s", i, msg)
		}
		if !messageShapeOK(e) {
			t.Errorf("seed %d (%s %s): the quick check is not sure of a well-formed payload", i, e.Type, e.Data)
		}
	}
}

// Where encoding/json's rules are subtle the quick check must defer to it.
func TestQuickShapeDefersWhereEncodingJSONDecides(t *testing.T) {
	for _, c := range []struct{ name, typ, data string }{
		{"key differing in case", TypeUserMessage, `{"content":[],"source":{"kind":"user"},"role":"user","ID":"m"}`},
		{"repeated field", TypeUserMessage, `{"content":[],"source":{"kind":"user"},"role":"user","id":"m","id":""}`},
		{"escaped key", TypeUserMessage, `{"content":[],"source":{"kind":"user"},"role":"user","i\u0064":"m"}`},
		{"null block", TypeUserMessage, `{"content":[null],"source":{"kind":"user"},"role":"user","id":"m"}`},
		{"text block without text", TypeUserMessage, `{"content":[{"type":"text"}],"source":{"kind":"user"},"role":"user","id":"m"}`},
		{"fractional turn", TypeAssistantMessage, `{"turn":1.5,"message":{"role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"},"id":"a"}}`},
		{"two tool-result blocks", TypeToolResult, `{"message":{"content":[{"type":"tool-result","toolCallId":"c","content":[]},{"type":"text","text":"x"}],"source":{"kind":"tool","callId":"c"},"role":"user","id":"r"}}`},
		{"mismatched call id", TypeToolResult, `{"message":{"content":[{"type":"tool-result","toolCallId":"d","content":[]}],"source":{"kind":"tool","callId":"c"},"role":"user","id":"r"}}`},
		{"trailing bytes", TypeUserMessage, `{"content":[],"source":{"kind":"user"},"role":"user","id":"m"}}`},
	} {
		if messageShapeOK(Event{Type: c.typ, Data: json.RawMessage(c.data)}) {
			t.Errorf("%s: the quick check claimed %s is well formed", c.name, c.data)
		}
	}
}

// Every single-byte edit of every seed: whenever the quick check is sure,
// checkMessageShape must agree. This is the property the fuzz target
// below explores further.
func TestQuickShapeNeverAcceptsWhatTheSlowPathRejects(t *testing.T) {
	for _, seed := range quickShapeSeeds() {
		eachEdit([]byte(seed.Data), func(edited []byte) {
			e := Event{Type: seed.Type, Data: json.RawMessage(edited)}
			if messageShapeOK(e) {
				if msg := checkMessageShape(e); msg != "" {
					t.Fatalf("%s %s: quick check accepted, checkMessageShape says %s", seed.Type, edited, msg)
				}
			}
		})
	}
}

// eachEdit calls check with every single-byte edit of data: each byte
// deleted, and each replaced by one of a few that JSON gives a meaning.
func eachEdit(data []byte, check func(edited []byte)) {
	subst := []byte(`"{}[],:\ 0-1.eEnulltrfasXy` + "\x00\xff")
	for i := range data {
		check(append(append([]byte{}, data[:i]...), data[i+1:]...))
		for _, c := range subst {
			edited := append([]byte{}, data...)
			edited[i] = c
			check(edited)
		}
	}
}

func FuzzQuickShape(f *testing.F) {
	types := []string{TypeUserMessage, TypeAssistantMessage, TypeToolResult}
	for _, e := range quickShapeSeeds() {
		for i, typ := range types {
			if typ == e.Type {
				f.Add(uint8(i), []byte(e.Data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		e := Event{Type: types[int(typ)%len(types)], Data: json.RawMessage(data)}
		if messageShapeOK(e) {
			if msg := checkMessageShape(e); msg != "" {
				t.Fatalf("quick check accepted %s, checkMessageShape says %s", data, msg)
			}
		}
	})
}

// requestHeaderSeeds are well-formed request/header payloads: what the
// writers produce, and a few the format allows.
func requestHeaderSeeds() []string {
	return []string{
		string(MustMarshal(RequestHeader{Reason: HeaderInitial, Header: EpochHeader{
			Config: CallConfig{Provider: "deepseek", Model: "deepseek-v4-flash"}, System: "sys",
			Tools: []json.RawMessage{json.RawMessage(`{"name":"bash","parameters":{"type":"object"}}`)}}})),
		`{"header":{"config":{"provider":"deepseek","model":"deepseek-v4-flash","reasoningEffort":"high"},"adapterDefaults":{"reasoningEffort":true},"system":"sys"},"reason":"initial"}`,
		`{"header":{"adapterDefaults":{"maxTokens":true,"reasoningEffort":true},"config":{"maxTokens":null,"model":"m","provider":"p\u00e9","reasoningEffort":"low"}},"reason":null}`,
		` {"reason":"resume","header":{"config":{"provider":"p","model":"数据库","x":[1,{"y":2}]},"tools":[]},"extra":{"a":true}} `,
		`{"header":{"config":{"provider":"p","model":"m"},"adapterDefaults":{}},"reason":7}`,
		`{"header":{"config":{"provider":"p","model":"m","maxTokens":8},"adapterDefaults":{"maxTokens":true,"maxTokens":true}}}`,
	}
}

func TestQuickRequestHeaderAcceptsWellFormedPayloads(t *testing.T) {
	for i, data := range requestHeaderSeeds() {
		if msg := checkRequestHeaderShape(json.RawMessage(data)); msg != "" {
			t.Fatalf("seed %d is not well formed: %s", i, msg)
		}
		if !requestHeaderOK([]byte(data)) {
			t.Errorf("seed %d: the quick check is not sure of %s", i, data)
		}
	}
}

// What checkRequestHeaderShape refuses, and where encoding/json's rules
// are subtle, the quick check is never sure of.
func TestQuickRequestHeaderDefersWhereEncodingJSONDecides(t *testing.T) {
	for _, c := range []struct{ name, data string }{
		{"no header", `{"reason":"initial"}`},
		{"null header", `{"header":null}`},
		{"config not an object", `{"header":{"config":[]}}`},
		{"empty provider", `{"header":{"config":{"provider":"","model":"m"}}}`},
		{"numeric model", `{"header":{"config":{"provider":"p","model":1}}}`},
		{"null reasoningEffort", `{"header":{"config":{"provider":"p","model":"m","reasoningEffort":null}}}`},
		{"empty reasoningEffort", `{"header":{"config":{"provider":"p","model":"m","reasoningEffort":""}}}`},
		{"unknown default marked", `{"header":{"config":{"provider":"p","model":"m"},"adapterDefaults":{"temperature":true}}}`},
		{"mark not true", `{"header":{"config":{"provider":"p","model":"m","maxTokens":1},"adapterDefaults":{"maxTokens":1}}}`},
		{"mark of an absent setting", `{"header":{"config":{"provider":"p","model":"m"},"adapterDefaults":{"maxTokens":true}}}`},
		{"mark given twice", `{"header":{"config":{"provider":"p","model":"m","maxTokens":1},"adapterDefaults":{"maxTokens":1,"maxTokens":true}}}`},
		{"null adapterDefaults", `{"header":{"config":{"provider":"p","model":"m"},"adapterDefaults":null}}`},
		{"legacy reason", `{"header":{"config":{"provider":"p","model":"m"}},"reason":"fallback"}`},
		{"escaped legacy reason", `{"header":{"config":{"provider":"p","model":"m"}},"reason":"f\u0061llback"}`},
		{"key differing in case", `{"header":{"config":{"provider":"p","Model":"m","model":"m"}}}`},
		{"escaped key", `{"header":{"config":{"provider":"p","mod\u0065l":"m"}}}`},
		{"repeated config", `{"header":{"config":{"provider":"p","model":"m"},"config":{}}}`},
		{"trailing bytes", `{"header":{"config":{"provider":"p","model":"m"}}}}`},
	} {
		if requestHeaderOK([]byte(c.data)) {
			t.Errorf("%s: the quick check claimed %s is well formed", c.name, c.data)
		}
	}
}

// Every single-byte edit of every seed: whenever the quick check is sure,
// checkRequestHeaderShape must agree (FuzzQuickRequestHeader explores
// further).
func TestQuickRequestHeaderNeverAcceptsWhatTheSlowPathRejects(t *testing.T) {
	for _, seed := range requestHeaderSeeds() {
		eachEdit([]byte(seed), func(edited []byte) {
			if requestHeaderOK(edited) {
				if msg := checkRequestHeaderShape(json.RawMessage(edited)); msg != "" {
					t.Fatalf("%s: quick check accepted, checkRequestHeaderShape says %s", edited, msg)
				}
			}
		})
	}
}

func FuzzQuickRequestHeader(f *testing.F) {
	for _, data := range requestHeaderSeeds() {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if requestHeaderOK(data) {
			if msg := checkRequestHeaderShape(json.RawMessage(data)); msg != "" {
				t.Fatalf("quick check accepted %s, checkRequestHeaderShape says %s", data, msg)
			}
		}
	})
}
