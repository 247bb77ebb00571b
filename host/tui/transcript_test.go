package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// logBuilder appends events to a memory-only live session.
type logBuilder struct {
	tb testing.TB
	l  *session.Live
}

func newLog(tb testing.TB, h session.Header) *logBuilder {
	return &logBuilder{tb: tb, l: session.NewLive(h, nil, session.LiveOptions{Now: func() time.Time { return testNow }})}
}

func (b *logBuilder) add(typ string, data any, opts ...session.AppendOption) *logBuilder {
	if _, err := b.l.Append(typ, data, opts...); err != nil {
		b.tb.Fatal(err)
	}
	return b
}

func (b *logBuilder) chunk(turn, step int, c llm.Chunk) *logBuilder {
	raw, err := session.Marshal(c)
	if err != nil {
		b.tb.Fatal(err)
	}
	return b.add(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: step, Chunk: raw})
}

func (b *logBuilder) events() []session.Event {
	_, ev := b.l.Snapshot()
	return ev
}

func userMsg(text string) session.Message {
	return session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(text)}, Source: session.UserSource, ID: "u-" + text}
}

func assistantMsg(turn, step int, blocks ...session.ContentBlock) session.AssistantMessage {
	return session.AssistantMessage{Turn: turn, Step: step, Message: session.Message{Role: session.RoleAssistant, Content: blocks, Source: session.ModelSource("p", "m"), ID: "a"}}
}

// visible lists the entries that lay out to at least one row, as
// "kind:text" (tool cards as "tool:name").
func visible(t *transcript) []string {
	var out []string
	mode := viewMode{showReasoning: true, maxToolLines: 6}
	th := newTheme(false)
	for _, e := range t.entries {
		if len(e.layout(80, mode, th)) == 0 {
			continue
		}
		switch e.kind {
		case entryTool:
			out = append(out, "tool:"+e.tool.name)
		default:
			out = append(out, kindName(e.kind)+":"+e.text)
		}
	}
	return out
}

func kindName(k entryKind) string {
	return [...]string{"user", "assistant", "reasoning", "tool", "notice", "error", "marker"}[k]
}

var testHeader = session.Header{ID: "s", Cwd: session.Ptr("/w")}

func TestStreamedEntriesBecomeTheFinalMessageInPlace(t *testing.T) {
	b := newLog(t, testHeader).
		add(session.TypeTurnStart, session.TurnStart{Turn: 1}).
		add(session.TypeUserMessage, userMsg("hi")).
		chunk(1, 1, llm.Chunk{Type: llm.ChunkReasoningDelta, Index: 0, Delta: "hmm"}).
		chunk(1, 1, llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Delta: "Hel"}).
		chunk(1, 1, llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Delta: "lo"})
	tr := newTranscript(testHeader, nil)
	for _, e := range b.events() {
		tr.apply(e, true)
	}
	if got := strings.Join(visible(tr), "|"); got != "user:hi|reasoning:hmm|assistant:Hello" {
		t.Fatalf("while streaming: %s", got)
	}
	if tr.stats.phase != phaseResponding {
		t.Errorf("phase = %v", tr.stats.phase)
	}
	n := len(tr.entries)
	b.add(session.TypeAssistantMessage, assistantMsg(1, 1, session.ReasoningBlock("hmm"), session.TextBlock("Hello!")))
	tr.apply(b.events()[len(b.events())-1], true)
	if got := strings.Join(visible(tr), "|"); got != "user:hi|reasoning:hmm|assistant:Hello!" {
		t.Errorf("after the message: %s", got)
	}
	if len(tr.entries) != n {
		t.Errorf("the message added entries (%d → %d) instead of finishing the streamed ones", n, len(tr.entries))
	}
}

func TestARetryRetractsTheFailedAttempt(t *testing.T) {
	b := newLog(t, testHeader).
		add(session.TypeTurnStart, session.TurnStart{Turn: 1}).
		add(session.TypeUserMessage, userMsg("hi")).
		chunk(1, 1, llm.Chunk{Type: llm.ChunkTextDelta, Index: 0, Delta: "partial garbage"}).
		chunk(1, 1, llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishError, Failure: &session.Failure{Message: "overloaded", Code: llm.CodeServer}}).
		add(session.TypeLLMRetry, session.LLMRetry{RetryID: "r", Turn: 1, Step: 1, Failure: session.Failure{Message: "overloaded", Code: llm.CodeServer}, DelayMs: 1500, Retry: 1, MaxRetries: 5}).
		chunk(1, 1, llm.Chunk{Type: llm.ChunkTextDelta, Index: 0, Delta: "good"})
	tr := newTranscript(testHeader, nil)
	for _, e := range b.events() {
		tr.apply(e, true)
	}
	got := strings.Join(visible(tr), "|")
	if strings.Contains(got, "garbage") || !strings.Contains(got, "notice:overloaded (SERVER) · retry 1 of 5 in 1.5s") || !strings.HasSuffix(got, "assistant:good") {
		t.Errorf("entries: %s", got)
	}
}

func TestLoadSkipsChunksOfFinishedCallsButShowsAnOpenStream(t *testing.T) {
	b := newLog(t, testHeader).
		add(session.TypeTurnStart, session.TurnStart{Turn: 1}).
		add(session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1}).
		add(session.TypeUserMessage, userMsg("one")).
		chunk(1, 1, llm.Chunk{Type: llm.ChunkTextDelta, Index: 0, Delta: "streamed"}).
		add(session.TypeAssistantMessage, assistantMsg(1, 1, session.TextBlock("final"))).
		add(session.TypeStepEnd, session.StepBoundary{Turn: 1, Step: 1}).
		add(session.TypeTurnEnd, session.TurnEnd{Turn: 1, Reason: session.TurnEndReason{Kind: session.EndCompleted}})
	tr := newTranscript(testHeader, nil)
	tr.load(b.events())
	if got := strings.Join(visible(tr), "|"); got != "user:one|assistant:final" {
		t.Errorf("finished log: %s", got)
	}
	b.add(session.TypeTurnStart, session.TurnStart{Turn: 2}).
		add(session.TypeStepStart, session.StepBoundary{Turn: 2, Step: 1}).
		add(session.TypeUserMessage, userMsg("two")).
		chunk(2, 1, llm.Chunk{Type: llm.ChunkTextDelta, Index: 0, Delta: "in progress"})
	tr = newTranscript(testHeader, nil)
	tr.load(b.events())
	if got := strings.Join(visible(tr), "|"); got != "user:one|assistant:final|user:two|assistant:in progress" {
		t.Errorf("log ending mid-stream: %s", got)
	}
	if tr.next != len(b.events()) {
		t.Errorf("next = %d, want %d", tr.next, len(b.events()))
	}
}

func TestTurnEndsAndMarkersAreShown(t *testing.T) {
	fork := session.Header{ID: "child", Cwd: session.Ptr("/w"), ParentSession: session.Ptr("parent-session-id"), SeedLength: session.Ptr(1)}
	cp := json.RawMessage(`{"kind":"plugin","plugin":"` + agent.CompactionPlugin + `","form":"checkpoint","compactionId":"c"}`)
	b := newLog(t, fork).
		add(session.TypeUserMessage, userMsg("seeded")).
		add(session.TypeEndSeed, struct{}{}).
		add(session.TypeTurnStart, session.TurnStart{Turn: 1}).
		add(session.TypeTurnEnd, session.TurnEnd{Turn: 1, Reason: session.TurnEndReason{Kind: session.EndAborted, Reason: &session.CancelCause{Kind: agent.CauseUser}}}).
		add(session.TypeTurnStart, session.TurnStart{Turn: 2}).
		add(session.TypeTurnEnd, session.TurnEnd{Turn: 2, Reason: session.TurnEndReason{Kind: session.EndError, Error: &session.Failure{Message: "too long", Code: llm.CodeContextExceeded}}}).
		add(session.TypeUserMessage, session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock("summary")}, Source: cp, ID: "cp"}, session.WithSurface(session.OpReplace(0, 0)), session.WithSources(0)).
		add(session.TypeEndSeed, struct{}{})
	tr := newTranscript(fork, nil)
	tr.load(b.events())
	want := []string{
		"user:seeded",
		"marker:forked from session parent-s",
		"notice:turn cancelled",
		"error:model error: too long (CONTEXT_WINDOW_EXCEEDED)\nRun /compact to shrink the conversation, then /retry.",
		"marker:earlier context was compacted",
		"marker:session resumed",
	}
	if got := visible(tr); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestToolCardsFollowTheirCallsAndResults(t *testing.T) {
	b := newLog(t, testHeader).
		add(session.TypeTurnStart, session.TurnStart{Turn: 1}).
		add(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "edit", Arguments: `{"file_path":"a.go","old_string":"x := 1","new_string":"x := 2"}`})
	tr := newTranscript(testHeader, nil)
	for _, e := range b.events() {
		tr.apply(e, true)
	}
	card := tr.entries[len(tr.entries)-1].tool
	if card.status != cardRunning || tr.stats.phase != phaseTools || tr.stats.toolsRunning != 1 {
		t.Fatalf("running card: status %v phase %v running %d", card.status, tr.stats.phase, tr.stats.toolsRunning)
	}
	b.add(session.TypeToolResult, session.ToolResult{Turn: 1, Step: 1,
		Message: session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.ToolResultBlock("c1", []session.ContentBlock{session.TextBlock("Error: the user rejected tool")}, true)}, Source: session.ToolSource("c1"), ID: "r"},
		Error:   &session.ToolErrorInfo{Name: "ToolDeniedError", Code: "DENIED"}})
	ev := b.events()
	tr.apply(ev[len(ev)-1], true)
	if card.status != cardDenied || card.errCode != "DENIED" || tr.stats.toolsRunning != 0 || tr.stats.phase != phaseWaiting {
		t.Errorf("finished card: status %v code %q running %d phase %v", card.status, card.errCode, tr.stats.toolsRunning, tr.stats.phase)
	}
	// Without a presenter the edit still shows its change from the arguments.
	card.view = &tools.CallView{Kind: tools.KindEdit, Title: "Edit a.go"}
	body := card.body()
	var lines []string
	for _, l := range body {
		lines = append(lines, l.text)
	}
	if got := strings.Join(lines, "\n"); got != "-x := 1\n+x := 2\nError: the user rejected tool" {
		t.Errorf("body:\n%s", got)
	}
}

func TestTitlesTodosAndUsageFold(t *testing.T) {
	b := newLog(t, testHeader).
		add(session.TypeSessionTitle, session.SessionTitle{Title: "first", MessageSeqs: []int{}, Source: json.RawMessage(`{"kind":"fallback"}`)}).
		add(session.TypeSessionTitle, session.SessionTitle{Title: "renamed", MessageSeqs: []int{}, Source: json.RawMessage(`{"kind":"user"}`)}).
		add(session.TypeTodoWrite, session.TodoWrite{Todos: []session.Todo{{Content: "a", Status: session.TodoInProgress}}}).
		add(session.TypeRequestContext, session.RequestContext{Provider: "p", Model: "m", ContextWindow: 1000}).
		add(session.TypeAssistantMessage, session.AssistantMessage{Turn: 1, Step: 1, Message: session.Message{Role: session.RoleAssistant, Source: session.ModelSource("p", "m")}, Usage: &session.Usage{InputTokens: 100, OutputTokens: 50, CacheReadTokens: 300}})
	tr := newTranscript(testHeader, nil)
	tr.load(b.events())
	if tr.title != "renamed" || len(tr.todos) != 1 || tr.stats.window != 1000 || tr.stats.lastContext != 450 {
		t.Errorf("title %q todos %d window %d context %d", tr.title, len(tr.todos), tr.stats.window, tr.stats.lastContext)
	}
	if rate, ok := tr.stats.cacheRate(); !ok || rate != 75 {
		t.Errorf("cache rate = %d %v", rate, ok)
	}
	b.add(session.TypeTurnStart, session.TurnStart{Turn: 2})
	ev := b.events()
	tr.apply(ev[len(ev)-1], true)
	if len(tr.todos) != 0 {
		t.Error("a new turn keeps the old plan")
	}
}

func TestTheEndOfAScriptedConversationIsARemarkNotAModelError(t *testing.T) {
	b := newLog(t, testHeader).
		add(session.TypeTurnStart, session.TurnStart{Turn: 1}).
		add(session.TypeTurnEnd, session.TurnEnd{Turn: 1, Reason: session.TurnEndReason{Kind: session.EndError,
			Error: &session.Failure{Message: "the demo script is over", Code: llm.CodeScriptOver}}})
	tr := newTranscript(testHeader, nil)
	tr.load(b.events())
	if got := strings.Join(visible(tr), "|"); got != "notice:the demo script is over" {
		t.Errorf("got %q", got)
	}
}
