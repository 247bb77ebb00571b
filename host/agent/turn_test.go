package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func TestTextTurnLogsTheFullEventSequence(t *testing.T) {
	p := newFakeProvider(t, textReply("Hello there"))
	h := newHarness(t, p)
	if _, err := h.prompts.AddSection(prompt.Section{Name: "identity", Text: "You are dsh on {{model}}."}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.prompts.AddContext(prompt.Section{Name: "policy", Text: "Permission mode: default."}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.cwd, "AGENTS.md"), []byte("Run go test.\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	h.prompt("Reply with exactly the word: hello")

	ev := h.events()
	expectTypes(t, ev,
		"turn/start", "step/start",
		"user/message", "user/message", "user/message",
		"session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "step/end", "turn/end")
	h.checkLog()

	if got := decode[session.TurnStart](t, ev[0]); got.Turn != 1 {
		t.Errorf("turn/start = %+v", got)
	}
	if got := decode[session.StepBoundary](t, ev[1]); got != (session.StepBoundary{Turn: 1, Step: 1}) {
		t.Errorf("step/start = %+v", got)
	}
	// Claimed prompt first, then the workspace instructions, then the
	// runtime-context snapshot.
	userMsg := decode[session.Message](t, ev[2])
	if userMsg.SourceKind() != session.SourceUser || session.JoinText(userMsg.Content) != "Reply with exactly the word: hello" {
		t.Errorf("prompt message = %+v", userMsg)
	}
	instr := decode[session.Message](t, ev[3])
	if instr.SourceKind() != session.SourceInstructions || !strings.Contains(session.JoinText(instr.Content), "Run go test.") {
		t.Errorf("instructions message = %+v", instr)
	}
	snap := decode[session.Message](t, ev[4])
	if !prompt.IsRuntimeContext(snap) || !strings.Contains(session.JoinText(snap.Content), "Permission mode: default.") {
		t.Errorf("runtime context message = %+v", snap)
	}
	title := decode[session.SessionTitle](t, ev[5])
	if title.Title != "Reply with exactly the word:" || !slices.Equal(title.MessageSeqs, []int{2}) || string(title.Source) != `{"kind":"fallback"}` {
		t.Errorf("title = %+v (%s)", title, title.Source)
	}
	hdr := decode[session.RequestHeader](t, ev[6])
	if hdr.Reason != session.HeaderInitial || hdr.Header.Config.Provider != "fake" || hdr.Header.Config.Model != "m1" ||
		hdr.Header.System != "You are dsh on m1." || hdr.Header.AdapterDefaults != nil || hdr.Header.Tools != nil {
		t.Errorf("request/header = %+v", hdr)
	}
	if got := string(ev[7].Data); got != `{"provider":"fake","model":"m1"}` {
		t.Errorf("request/context = %s", got)
	}
	msgEv := ev[len(ev)-3]
	am := decode[session.AssistantMessage](t, msgEv)
	var chunkSeqs []int
	for _, e := range ofType(ev, session.TypeAssistantChunk) {
		chunkSeqs = append(chunkSeqs, e.Seq)
	}
	if !slices.Equal(sources(t, msgEv), chunkSeqs) {
		t.Errorf("assistant/message sources = %v, chunk seqs %v", sources(t, msgEv), chunkSeqs)
	}
	if am.Turn != 1 || am.Step != 1 || am.Interrupted || session.JoinText(am.Message.Content) != "Hello there" ||
		am.Usage == nil || am.Usage.InputTokens != 10 || string(am.Message.Source) != `{"kind":"model","provider":"fake","model":"m1"}` {
		t.Errorf("assistant/message = %+v", am)
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndCompleted {
		t.Errorf("turn/end = %+v", r)
	}

	// The request is the header plus the history derived at build time.
	reqs := p.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	want, err := session.DeriveMessages(ev[:8])
	if err != nil {
		t.Fatal(err)
	}
	if got := reqs[0]; got.System != hdr.Header.System || len(got.Messages) != 3 || got.SessionID != "sess-1" ||
		got.Purpose != llm.PurposeTurn || !sameMessages(got.Messages, want) {
		t.Errorf("request = %+v", got)
	}
}

func sameMessages(a, b []session.Message) bool {
	x, _ := session.Marshal(a)
	y, _ := session.Marshal(b)
	return string(x) == string(y)
}

func TestSecondTurnContinuesNumberingAndSkipsUnchangedHeaderContextAndTitle(t *testing.T) {
	p := newFakeProvider(t, textReply("one"), textReply("two"))
	mode := "default" // read by the driver only while a turn runs
	h := newHarness(t, p, withOptions(func(o *Options) {
		o.Vars = func() map[string]string { return map[string]string{"permission_mode": mode} }
	}))
	if _, err := h.prompts.AddContext(prompt.Section{Name: "policy", Text: "Mode: {{permission_mode}}."}); err != nil {
		t.Fatal(err)
	}
	h.prompt("first prompt")
	first := len(h.events())
	h.prompt("second prompt")
	ev := h.events()[first:]
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	if got := decode[session.TurnStart](t, ev[0]); got.Turn != 2 {
		t.Errorf("second turn number = %d", got.Turn)
	}

	// A changed runtime context is re-sent as a new snapshot.
	mode = "bypass"
	p.add(textReply("three"))
	first = len(h.events())
	h.prompt("third prompt")
	ev = h.events()[first:]
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "user/message", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	if got := session.JoinText(decode[session.Message](t, ev[3]).Content); !strings.HasSuffix(got, "Mode: bypass.") {
		t.Errorf("new snapshot = %q", got)
	}
	h.checkLog()
}

func TestRuntimeContextThatBecomesEmptySendsTheNoneNotice(t *testing.T) {
	p := newFakeProvider(t, textReply("one"), textReply("two"))
	h := newHarness(t, p)
	remove, err := h.prompts.AddContext(prompt.Section{Name: "policy", Text: "Sandbox: on."})
	if err != nil {
		t.Fatal(err)
	}
	h.prompt("first")
	remove()
	first := len(h.events())
	h.prompt("second")
	ev := h.events()[first:]
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "user/message", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	none := decode[session.Message](t, ev[3])
	if session.JoinText(none.Content) != prompt.NoRuntimeContextText || string(none.Source) != `{"kind":"plugin","plugin":"dsh/system-prompt"}` {
		t.Errorf("none notice = %+v %s", none, none.Source)
	}
}

func TestToolTurnRunsASecondStepWithoutANewHeader(t *testing.T) {
	g, tr := newGates(), &toolTrace{}
	p := newFakeProvider(t, toolReply(call("c1", "read", `{"path":"a.go"}`)), textReply("a.go is fine"))
	h := newHarness(t, p, withTools(fileTools(t, g, tr)))
	h.prompt("check a.go")
	ev := h.events()
	expectTypes(t, ev,
		"turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "tool/call", "tool/result", "step/end",
		"step/start", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	h.checkLog()

	hdr := decode[session.RequestHeader](t, ofType(ev, session.TypeRequestHeader)[0])
	var names []string
	for _, raw := range hdr.Header.Tools {
		var s tools.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"read", "write"}) {
		t.Errorf("header tools = %v", names)
	}
	tc := ofType(ev, session.TypeToolCall)[0]
	if got := decode[session.ToolCall](t, tc); got != (session.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "read", Arguments: `{"path":"a.go"}`}) {
		t.Errorf("tool/call = %+v", got)
	}
	resEv := ofType(ev, session.TypeToolResult)[0]
	if !slices.Equal(sources(t, resEv), []int{tc.Seq}) || string(resEv.SurfaceOp) != `"append"` {
		t.Errorf("tool/result envelope = %s", resEv.SourceEventSeqs)
	}
	res := decode[session.ToolResult](t, resEv)
	want := `{"turn":1,"step":1,"message":{"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"done read a.go"}],"isError":false}],"source":{"kind":"tool","callId":"c1"},"role":"user","id":"` + res.Message.ID + `"}}`
	if string(resEv.Data) != want {
		t.Errorf("tool/result data\n got %s\nwant %s", resEv.Data, want)
	}
	// The second request carries the call and its result.
	reqs := p.requests()
	if n := len(reqs[1].Messages); n != 3 {
		t.Errorf("second request has %d messages", n)
	}
}

func TestUnknownToolAndInvalidArgumentsBecomeErrorResults(t *testing.T) {
	p := newFakeProvider(t,
		toolReply(call("c1", "nope", `{}`), call("c2", "read", `{"path":`), call("c3", "read", ``)),
		textReply("ok"))
	h := newHarness(t, p, withTools(fileTools(t, newGates(), &toolTrace{})))
	h.prompt("go")
	results := ofType(h.events(), session.TypeToolResult)
	if len(results) != 3 {
		t.Fatalf("%d results", len(results))
	}
	for i, want := range []string{tools.CodeUnknownTool, tools.CodeInvalidArgs, tools.CodeInvalidArgs} {
		r := decode[session.ToolResult](t, results[i])
		if r.Error == nil || r.Error.Code != want || !r.Message.Content[0].IsError {
			t.Errorf("result %d = %+v, want code %s", i, r, want)
		}
	}
	calls := ofType(h.events(), session.TypeToolCall)
	if got := decode[session.ToolCall](t, calls[1]).Arguments; got != `{"path":` {
		t.Errorf("invalid arguments logged as %q", got)
	}
	h.checkLog()
}

func TestMaxTokensDropsToolCallsAndEndsTheTurn(t *testing.T) {
	cs := append(textChunks(0, "I will read"), callChunks(1, "c1", "read", `{"path":"a"}`)...)
	cs = append(cs, usage(5, 100), finish(llm.FinishMaxTokens))
	p := newFakeProvider(t, chunks(cs...))
	h := newHarness(t, p, withTools(fileTools(t, newGates(), &toolTrace{})))
	h.prompt("go")
	ev := h.events()
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "step/end", "turn/end")
	am := decode[session.AssistantMessage](t, ofType(ev, session.TypeAssistantMessage)[0])
	if len(am.Message.Content) != 1 || am.Message.Content[0].Type != session.BlockText {
		t.Errorf("max-tokens message content = %+v", am.Message.Content)
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndMaxTokens {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()
}

func TestMaxTokensIsStickyAcrossLaterSteps(t *testing.T) {
	cs := append(textChunks(0, "partial"), finish(llm.FinishMaxTokens))
	started, release := make(chan struct{}), make(chan struct{})
	p := newFakeProvider(t, held(started, release, chunks(cs...)), textReply("steered answer"))
	h := newHarness(t, p)
	h.agent.Followup(UserText("go", "p1"))
	<-started
	// Steering sent while the step runs keeps the turn going after the
	// max-tokens step; the later completed step must not hide it.
	h.agent.Steer(UserText("also this", "steer-1"))
	close(release)
	h.idle()
	ev := h.events()
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "step/end",
		"step/start", "user/message", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	if r := lastTurnEnd(t, ev); r.Kind != session.EndMaxTokens {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()
}

func TestPromptAssemblyErrorEndsTheTurnWithAnUnknownFailure(t *testing.T) {
	p := newFakeProvider(t)
	h := newHarness(t, p)
	if _, err := h.prompts.AddSection(prompt.Section{Name: "broken", Text: "Hello {{nobody}}"}); err != nil {
		t.Fatal(err)
	}
	h.prompt("go")
	ev := h.events()
	expectTypes(t, ev, "turn/start", "turn/end")
	if r := lastTurnEnd(t, ev); r.Kind != session.EndError || r.Error.Code != llm.CodeUnknown || !strings.Contains(r.Error.Message, "nobody") {
		t.Errorf("turn/end = %+v", r.Error)
	}
}

// TestTitleSetBeforeTheFirstPromptIsNotOverwritten pins that a front end's
// /title written before the first prompt wins over the fallback title.
func TestTitleSetBeforeTheFirstPromptIsNotOverwritten(t *testing.T) {
	h := newHarness(t, newFakeProvider(t, textReply("ok")))
	user := session.SessionTitle{Title: "My task", MessageSeqs: []int{}, Source: json.RawMessage(`{"kind":"user"}`)}
	if _, err := h.live.Append(session.TypeSessionTitle, user); err != nil {
		t.Fatal(err)
	}
	h.prompt("a prompt that would make a fallback title")
	var titles []string
	for _, e := range h.events() {
		if e.Type == session.TypeSessionTitle {
			titles = append(titles, decode[session.SessionTitle](t, e).Title)
		}
	}
	if !slices.Equal(titles, []string{"My task"}) {
		t.Fatalf("titles = %q", titles)
	}
}
