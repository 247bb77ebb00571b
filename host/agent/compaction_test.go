package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

const summaryText = "Goals: compare alpha and beta. Files: none."

// twoLongTurns runs two turns whose prompts dominate the history.
func twoLongTurns(h *harness) {
	h.prompt(strings.Repeat("alpha ", 100))
	h.prompt(strings.Repeat("beta ", 120))
}

// compactionOn keeps the newest 30% of the conversation verbatim, so that
// twoLongTurns' second turn survives a compaction.
func compactionOn(o *Options) { o.Compaction = CompactionConfig{Enabled: true, RetainRatio: 0.3} }

func TestAutomaticCompactionReplacesOlderHistoryBeforeAStep(t *testing.T) {
	p := newFakeProvider(t, textReply("answer one"), textReply("answer two"), textReply(summaryText), textReply("answer three"))
	h := newHarness(t, p, withOptions(compactionOn))
	twoLongTurns(h)
	before := h.events()
	oldHistory, err := session.DeriveMessages(before)
	if err != nil {
		t.Fatal(err)
	}
	// The window becomes known and small: the next request would exceed 80%.
	p.setModel(llm.ModelInfo{ID: "m1", ContextWindow: 200})
	h.prompt("and gamma?")

	ev := h.events()
	expectTypes(t, ev[len(before):],
		"turn/start",
		"compaction/start", "assistant/chunk*", "compaction/summary", "user/message", "compaction/end",
		"step/start", "user/message", "request/context", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	h.checkLog()

	users := ofType(before, session.TypeUserMessage)
	answers := ofType(before, session.TypeAssistantMessage)
	shadowedSeqs := []int{users[0].Seq, answers[0].Seq}

	start := ofType(ev, session.TypeCompactionStart)[0]
	if got := string(start.Data); got != `{"compactionId":"`+decode[CompactionStart](t, start).CompactionID+`","turn":3,"trigger":"pressure"}` {
		t.Errorf("compaction/start = %s", got)
	}
	for _, c := range ofType(ev[start.Seq:], session.TypeAssistantChunk)[:3] {
		if d := decode[session.AssistantChunk](t, c); d.Turn != 3 || d.Step != 0 {
			t.Errorf("summary chunk at turn %d step %d", d.Turn, d.Step)
		}
	}
	sumEv := ofType(ev, session.TypeCompactionSummary)[0]
	sum := decode[CompactionSummary](t, sumEv)
	if sum.Summary != summaryText || !slices.Equal(sum.ShadowedSeqs, shadowedSeqs) ||
		sum.ShadowedRange != (SeqRange{Start: shadowedSeqs[0], End: shadowedSeqs[1]}) || sum.ShadowedTokenCount <= 0 ||
		sum.Provider != "fake" || sum.Model != "m1" || sum.Usage == nil {
		t.Errorf("compaction/summary = %+v", sum)
	}
	replace := ofType(ev, session.TypeUserMessage)[2]
	if got, want := string(replace.SurfaceOp), `{"op":"replace","start":`+itoa(shadowedSeqs[0])+`,"end":`+itoa(shadowedSeqs[1])+`}`; got != want {
		t.Errorf("surfaceOp = %s, want %s", got, want)
	}
	if got, want := sources(t, replace), []int{start.Seq, sumEv.Seq, shadowedSeqs[0], shadowedSeqs[1]}; !slices.Equal(got, want) {
		t.Errorf("replace sources = %v, want %v", got, want)
	}
	if end := ofType(ev, session.TypeCompactionEnd)[0]; !strings.Contains(string(end.Data), `"turn":3}`) || strings.Contains(string(end.Data), "error") {
		t.Errorf("compaction/end = %s", end.Data)
	}

	fold, err := session.Fold(ev)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range shadowedSeqs {
		if s := fold.Surface(seq); s != session.SurfaceShadowed {
			t.Errorf("seq %d is %s after compaction", seq, s)
		}
	}
	if s := fold.Surface(replace.Seq); s != session.SurfaceCurrent {
		t.Errorf("summary message is %s", s)
	}

	reqs := p.requests()
	summaryReq, next := reqs[2], reqs[3]
	if summaryReq.Purpose != llm.PurposeCompaction || *summaryReq.Config.MaxTokens != 8192 || len(summaryReq.Messages) != 3 ||
		!strings.Contains(session.JoinText(summaryReq.Messages[2].Content), "Summarize the conversation above") {
		t.Errorf("summary request = %+v", summaryReq)
	}
	// The request after compaction starts with the summary and is shorter
	// than the history it replaced plus the new prompt.
	if len(next.Messages) != len(oldHistory)-2+1+1 || !strings.Contains(session.JoinText(next.Messages[0].Content), "<compacted-summary>\n"+summaryText+"\n</compacted-summary>") {
		t.Errorf("request after compaction has %d messages, first %q", len(next.Messages), session.JoinText(next.Messages[0].Content))
	}
	newHistory, _ := session.DeriveMessages(ev)
	if historyBytes(newHistory) >= historyBytes(append(oldHistory, next.Messages[len(next.Messages)-2:]...)) {
		t.Error("derived history did not shrink")
	}
}

func historyBytes(msgs []session.Message) int {
	raw, _ := session.Marshal(msgs)
	return len(raw)
}

func itoa(n int) string { return string(session.MustMarshal(n)) }

func TestCompactionThatShadowsContextAndInstructionsSendsThemAgain(t *testing.T) {
	p := newFakeProvider(t, textReply("answer one"), textReply("answer two"), textReply(summaryText), textReply("answer three"))
	h := newHarness(t, p, withOptions(compactionOn))
	if _, err := h.prompts.AddContext(prompt.Section{Name: "policy", Text: "Sandbox: workspace-write."}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.cwd, "AGENTS.md"), []byte("Always run the tests."), 0o600); err != nil {
		t.Fatal(err)
	}
	twoLongTurns(h)
	first := len(h.events())
	p.setModel(llm.ModelInfo{ID: "m1", ContextWindow: 200})
	h.prompt("and gamma?")
	ev := h.events()[first:]
	expectTypes(t, ev,
		"turn/start",
		"compaction/start", "assistant/chunk*", "compaction/summary", "user/message", "compaction/end",
		"step/start", "user/message", "user/message", "user/message", "request/context", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	entered := ofType(ev, session.TypeUserMessage)
	if instr := decode[session.Message](t, entered[2]); instr.SourceKind() != session.SourceInstructions {
		t.Errorf("instructions not re-entered: %+v", instr)
	}
	if snap := decode[session.Message](t, entered[3]); !prompt.IsRuntimeContext(snap) {
		t.Errorf("snapshot not re-entered: %+v", snap)
	}
	// Before the compaction each was entered once, on the first step.
	if n := len(ofType(h.events()[:first], session.TypeUserMessage)); n != 4 {
		t.Errorf("%d user messages before compaction", n)
	}
	h.checkLog()
}

func TestFailedCompactionIsLoggedAndTheTurnGoesOn(t *testing.T) {
	p := newFakeProvider(t, textReply("answer one"), textReply("answer two"),
		failWith(llm.Failf(llm.CodeServer, "summarizer down")), textReply("answer three"))
	h := newHarness(t, p, withOptions(compactionOn))
	twoLongTurns(h)
	first := len(h.events())
	p.setModel(llm.ModelInfo{ID: "m1", ContextWindow: 200})
	h.prompt("and gamma?")
	ev := h.events()
	expectTypes(t, ev[first:],
		"turn/start", "compaction/start", "assistant/chunk*", "compaction/end",
		"step/start", "user/message", "request/context", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	end := decode[CompactionEnd](t, ofType(ev, session.TypeCompactionEnd)[0])
	if !strings.Contains(end.Error, "summarizer down") {
		t.Errorf("compaction/end error = %q", end.Error)
	}
	fold, _ := session.Fold(ev)
	if len(fold.Replacements()) != 0 {
		t.Error("a failed compaction replaced history")
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndCompleted {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()
}

func TestSummaryNotSmallerThanTheHistoryIsRejected(t *testing.T) {
	p := newFakeProvider(t, textReply("answer one"), textReply("answer two"),
		textReply(strings.Repeat("verbose ", 200)), textReply("answer three"))
	h := newHarness(t, p, withOptions(compactionOn))
	twoLongTurns(h)
	p.setModel(llm.ModelInfo{ID: "m1", ContextWindow: 200})
	h.prompt("and gamma?")
	end := decode[CompactionEnd](t, ofType(h.events(), session.TypeCompactionEnd)[0])
	if !strings.Contains(end.Error, "not smaller") {
		t.Errorf("compaction/end error = %q", end.Error)
	}
	if n := len(ofType(h.events(), session.TypeCompactionSummary)); n != 0 {
		t.Errorf("%d summaries logged", n)
	}
}

func TestCompactionIsSkippedWhenTheWindowIsUnknownOrRoomy(t *testing.T) {
	for _, window := range []int{0, 1 << 20} {
		p := newFakeProvider(t, textReply("one"), textReply("two"), textReply("three"))
		h := newHarness(t, p, withOptions(compactionOn))
		p.setModel(llm.ModelInfo{ID: "m1", ContextWindow: window})
		twoLongTurns(h)
		h.prompt("and gamma?")
		if n := len(ofType(h.events(), session.TypeCompactionStart)); n != 0 {
			t.Errorf("window %d: %d compactions", window, n)
		}
	}
}

func TestManualCompactSummarizesAnIdleSession(t *testing.T) {
	p := newFakeProvider(t, textReply("answer one"), textReply("answer two"), textReply(summaryText))
	h := newHarness(t, p)
	twoLongTurns(h)
	first := len(h.events())
	if err := h.agent.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := h.events()
	expectTypes(t, ev[first:], "compaction/start", "assistant/chunk*", "compaction/summary", "user/message", "compaction/end")
	start := decode[CompactionStart](t, ev[first])
	if start.Turn != nil || start.Trigger != TriggerManual {
		t.Errorf("compaction/start = %+v", start)
	}
	if !strings.Contains(string(ev[first].Data), `"turn":null`) {
		t.Errorf("standalone compaction/start = %s", ev[first].Data)
	}
	if c := decode[session.AssistantChunk](t, ev[first+1]); c.Turn != 2 || c.Step != 0 {
		t.Errorf("summary chunk turn %d step %d", c.Turn, c.Step)
	}
	if ops := h.sink.log(); ops[len(ops)-1] != "flush" {
		t.Errorf("manual compaction did not end with a flush: %v", ops[len(ops)-3:])
	}
	h.checkLog()

	// The next turn continues from the summary.
	p.add(textReply("answer three"))
	h.prompt("next")
	msgs := p.requests()[3].Messages
	if !strings.Contains(session.JoinText(msgs[0].Content), summaryText) {
		t.Errorf("first message after compaction = %q", session.JoinText(msgs[0].Content))
	}
}

func TestManualCompactRefusesShortSessionsAndBusyAgents(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	p := newFakeProvider(t, textReply("short"), held(started, release, textReply("slow")))
	h := newHarness(t, p)
	h.prompt("hi")
	before := len(h.events())
	if err := h.agent.Compact(context.Background()); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("Compact on a two-message session = %v", err)
	}
	if len(h.events()) != before {
		t.Error("a refused compaction wrote events")
	}
	h.agent.Followup(UserText("slow one", "p2"))
	<-started
	if err := h.agent.Compact(context.Background()); !errors.Is(err, ErrBusy) {
		t.Errorf("Compact while running = %v", err)
	}
	close(release)
	h.idle()
}

func TestPromptSentDuringManualCompactionRunsAfterIt(t *testing.T) {
	summarizing, release := make(chan struct{}), make(chan struct{})
	p := newFakeProvider(t, textReply("answer one"), textReply("answer two"),
		held(summarizing, release, textReply(summaryText)), textReply("after"))
	h := newHarness(t, p)
	twoLongTurns(h)
	done := make(chan error)
	go func() { done <- h.agent.Compact(context.Background()) }()
	<-summarizing
	h.agent.Followup(UserText("queued meanwhile", "p3"))
	if s := h.agent.Status(); s != StatusIdle {
		t.Errorf("status during compaction = %s", s)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.idle()
	ev := h.events()
	endSeq := ofType(ev, session.TypeCompactionEnd)[0].Seq
	starts := ofType(ev, session.TypeTurnStart)
	if len(starts) != 3 || starts[2].Seq < endSeq {
		t.Errorf("queued prompt ran at seq %d, compaction ended at %d", starts[len(starts)-1].Seq, endSeq)
	}
	h.checkLog()
}

func TestCancelledManualCompactionLogsItsEnd(t *testing.T) {
	summarizing := make(chan struct{})
	p := newFakeProvider(t, textReply("answer one"), textReply("answer two"), streamThenHang(summarizing))
	h := newHarness(t, p)
	twoLongTurns(h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.agent.Compact(ctx) }()
	<-summarizing
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Compact = %v", err)
	}
	end := decode[CompactionEnd](t, ofType(h.events(), session.TypeCompactionEnd)[0])
	if !strings.Contains(end.Error, "cancelled") {
		t.Errorf("compaction/end = %+v", end)
	}
	h.checkLog()
}

func TestSelectRegionNeverSplitsAToolCallFromItsResult(t *testing.T) {
	user := func(tokens int) node { return node{tokens: tokens} }
	calls := func(tokens int, ids ...string) node { return node{tokens: tokens, opens: ids} }
	result := func(tokens int, id string) node { return node{tokens: tokens, closes: id} }
	cases := []struct {
		name   string
		nodes  []node
		retain float64
		want   int // nodes summarized; 0 = nothing
	}{
		{"plain history keeps the newest share", []node{user(10), user(10), user(10), user(10)}, 0.3, 2},
		{"cut moves before an open call", []node{user(10), user(10), calls(10, "a", "b"), result(10, "a"), result(40, "b"), user(10)}, 0.6, 2},
		{"balanced cut after a closed call", []node{user(10), calls(10, "a"), result(10, "a"), user(10), user(30)}, 0.5, 3},
		{"fewer than two nodes is not worth it", []node{user(10), user(100)}, 0.3, 0},
		{"everything open is not compactable", []node{user(10), calls(10, "a"), user(10), user(10), result(10, "a")}, 0.1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.nodes {
				c.nodes[i].event.Seq = i
			}
			r := selectRegion(c.nodes, c.retain)
			got := 0
			if r != nil {
				got = len(r.nodes)
			}
			if got != c.want {
				t.Errorf("summarized %d nodes, want %d", got, c.want)
			}
		})
	}
}

func TestPressureUsesReportedUsageAfterTheLastCompaction(t *testing.T) {
	plan := &stepPlan{system: strings.Repeat("s", 40)}
	withUsage := session.Event{Seq: 1, Type: session.TypeAssistantMessage,
		Data: []byte(`{"turn":1,"step":1,"message":{"role":"assistant","content":[],"source":{},"id":"a"},"usage":{"inputTokens":900,"outputTokens":50,"cacheReadTokens":50}}`)}
	nodes := []node{
		{event: session.Event{Seq: 0, Type: session.TypeUserMessage}, tokens: 5},
		{event: withUsage, tokens: 5},
		{event: session.Event{Seq: 2, Type: session.TypeToolResult}, tokens: 7},
	}
	pending := []session.Message{UserText("hi", "x")}
	pend := messageTokens(pending[0])
	byBytes := 10 + 5 + 5 + 7 + pend
	if got := pressure(plan, nodes, -1, pending); got != 1000+7+pend {
		t.Errorf("with usage: %d, want %d", got, 1000+7+pend)
	}
	// Usage reported before a compaction describes a history that no longer
	// exists.
	if got := pressure(plan, nodes, 3, pending); got != byBytes {
		t.Errorf("after a compaction: %d, want %d", got, byBytes)
	}
	// The byte estimate wins when it is larger.
	nodes[0].tokens = 5000
	if got := pressure(plan, nodes, -1, pending); got != byBytes-5+5000 {
		t.Errorf("large head: %d, want %d", got, byBytes-5+5000)
	}
}

func TestContextOverflowCompactsAndRetriesTheRequestOnce(t *testing.T) {
	overflow := failWith(&llm.Error{Failure: session.Failure{Code: llm.CodeContextExceeded, Message: "maximum context length exceeded", Status: 400}})
	p := newFakeProvider(t, textReply("answer one"), textReply("answer two"), overflow, textReply(summaryText), textReply("answer three"))
	h := newHarness(t, p, withOptions(compactionOn))
	twoLongTurns(h)
	first := len(h.events())
	h.prompt("and gamma?")
	ev := h.events()[first:]
	expectTypes(t, ev,
		"turn/start", "step/start", "user/message", "assistant/chunk*",
		"compaction/start", "assistant/chunk*", "compaction/summary", "user/message", "compaction/end",
		"assistant/chunk*", "assistant/message", "step/end", "turn/end")
	if start := decode[CompactionStart](t, ofType(ev, session.TypeCompactionStart)[0]); start.Trigger != TriggerOverflow {
		t.Errorf("trigger = %q", start.Trigger)
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndCompleted {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()

	// A second overflow in the same step is the turn's error.
	p.add(overflow, textReply(summaryText), overflow)
	h.prompt("more")
	if r := lastTurnEnd(t, h.events()); r.Kind != session.EndError || r.Error.Code != llm.CodeContextExceeded {
		t.Errorf("turn/end after a second overflow = %+v", r)
	}
	h.checkLog()
}
