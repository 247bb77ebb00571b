package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// genSession builds a valid log of at least n events: turns of a prompt,
// a streamed reply asking for a tool, the tool's result and a streamed
// final answer, the shape of real coding sessions.
func genSession(tb testing.TB, n int) (session.Header, []session.Event) {
	tb.Helper()
	h := session.Header{ID: "bench-session", CreatedAt: testNow.UnixMilli(), Cwd: session.Ptr("/work/project"), DelegationDepth: session.Ptr(0)}
	l := session.NewLive(h, nil, session.LiveOptions{})
	must := func(_ session.Event, err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	chunk := func(turn, step int, c llm.Chunk) {
		raw, err := session.Marshal(c)
		if err != nil {
			tb.Fatal(err)
		}
		must(l.Append(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: step, Chunk: raw}))
	}
	src := session.ModelSource("deepseek", "deepseek-v4-flash")
	for turn := 1; l.Len() < n; turn++ {
		must(l.Append(session.TypeTurnStart, session.TurnStart{Turn: turn}))
		must(l.Append(session.TypeStepStart, session.StepBoundary{Turn: turn, Step: 1}))
		must(l.Append(session.TypeUserMessage, session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(fmt.Sprintf("Request %d: please look at file_%d.go and fix the bug", turn, turn))}, Source: session.UserSource, ID: fmt.Sprintf("u%d", turn)}))
		if turn == 1 {
			must(l.Append(session.TypeRequestHeader, session.RequestHeader{Header: session.EpochHeader{Config: session.CallConfig{Provider: "deepseek", Model: "deepseek-v4-flash"}}, Reason: session.HeaderInitial}))
		}
		text := fmt.Sprintf("I will read `file_%d.go` first.", turn)
		chunk(turn, 1, llm.Chunk{Type: llm.ChunkBlockStart, Index: 0, BlockType: session.BlockText})
		for _, w := range strings.SplitAfter(text, " ") {
			chunk(turn, 1, llm.Chunk{Type: llm.ChunkTextDelta, Index: 0, Delta: w})
		}
		args := fmt.Sprintf(`{"file_path":"file_%d.go"}`, turn)
		callID := fmt.Sprintf("call_%d", turn)
		chunk(turn, 1, llm.Chunk{Type: llm.ChunkToolCallDelta, Index: 1, ID: callID, Name: "read", ArgumentsDelta: args})
		chunk(turn, 1, llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishToolCalls})
		must(l.Append(session.TypeAssistantMessage, session.AssistantMessage{Turn: turn, Step: 1, Message: session.Message{Role: session.RoleAssistant, Content: []session.ContentBlock{session.TextBlock(text), session.ToolCallBlock(callID, "read", args)}, Source: src, ID: fmt.Sprintf("a%d", turn)}, Usage: &session.Usage{InputTokens: 100, OutputTokens: 20}}))
		must(l.Append(session.TypeToolCall, session.ToolCall{Turn: turn, Step: 1, CallID: callID, Name: "read", Arguments: args}))
		var out strings.Builder
		for i := 1; i <= 40; i++ {
			fmt.Fprintf(&out, "%d: line %d of file_%d.go\n", i, i, turn)
		}
		must(l.Append(session.TypeToolResult, session.ToolResult{Turn: turn, Step: 1, Message: session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.ToolResultBlock(callID, []session.ContentBlock{session.TextBlock(out.String())}, false)}, Source: session.ToolSource(callID), ID: "r" + callID}}))
		must(l.Append(session.TypeStepEnd, session.StepBoundary{Turn: turn, Step: 1}))
		must(l.Append(session.TypeStepStart, session.StepBoundary{Turn: turn, Step: 2}))
		answer := fmt.Sprintf("Fixed the bug in turn %d:\n\n- changed the loop bound\n- added a test\n\n```go\nfor i := 0; i < n; i++ {}\n```", turn)
		chunk(turn, 2, llm.Chunk{Type: llm.ChunkBlockStart, Index: 0, BlockType: session.BlockText})
		for _, w := range strings.SplitAfter(answer, " ") {
			chunk(turn, 2, llm.Chunk{Type: llm.ChunkTextDelta, Index: 0, Delta: w})
		}
		chunk(turn, 2, llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishStop})
		must(l.Append(session.TypeAssistantMessage, session.AssistantMessage{Turn: turn, Step: 2, Message: session.Message{Role: session.RoleAssistant, Content: []session.ContentBlock{session.TextBlock(answer)}, Source: src, ID: fmt.Sprintf("b%d", turn)}, Usage: &session.Usage{InputTokens: 200, OutputTokens: 40, CacheReadTokens: 100}}))
		must(l.Append(session.TypeStepEnd, session.StepBoundary{Turn: turn, Step: 2}))
		must(l.Append(session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.EndCompleted}}))
	}
	_, events := l.Snapshot()
	if err := session.ValidateLog(h, events); err != nil {
		tb.Fatalf("generated log is invalid: %v", err)
	}
	return h, events
}
