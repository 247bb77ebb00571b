package session

import (
	"errors"
	"slices"
	"testing"
)

// texts renders messages as role:text for comparison.
func texts(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		text := JoinText(m.Content)
		for _, b := range m.Content {
			if b.Type == BlockToolResult {
				text = "result(" + b.ToolCallID + "):" + JoinText(b.Content)
			}
		}
		out[i] = m.Role + ":" + text
	}
	return out
}

func TestDeriveMessagesProjectsSurfaceNodesInOrder(t *testing.T) {
	call := build(3, TypeAssistantMessage, AssistantMessage{Turn: 1, Step: 1, Message: assistantMsg(3,
		ReasoningBlock("think"), TextBlock("let me look"), ToolCallBlock("c1", "read", `{"path":"a"}`))}, nil)
	events := []Event{
		logEv(0, TypeTurnStart, TurnStart{Turn: 1}),
		logEv(1, TypeStepStart, StepBoundary{Turn: 1, Step: 1}),
		userEv(2, "read a"),
		call,
		logEv(4, TypeToolCall, ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "read", Arguments: `{"path":"a"}`}),
		toolResultEv(5, "c1", "contents of a"),
		logEv(6, TypeStepEnd, StepBoundary{Turn: 1, Step: 1}),
		logEv(7, TypeSessionTitle, SessionTitle{Title: "read a", MessageSeqs: []int{2}, Source: []byte(`{"kind":"fallback"}`)}),
		assistantEv(8, "done"),
		logEv(9, TypeTurnEnd, TurnEnd{Turn: 1, Reason: TurnEndReason{Kind: EndCompleted}}),
	}
	msgs, err := DeriveMessages(events)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user:read a", "assistant:let me look", "user:result(c1):contents of a", "assistant:done"}
	if got := texts(msgs); !slices.Equal(got, want) {
		t.Fatalf("history = %q\nwant      %q", got, want)
	}
	// The assistant message keeps every block, reasoning and tool calls included.
	if len(msgs[1].Content) != 3 || msgs[1].Content[2].Arguments != `{"path":"a"}` || msgs[1].ID != "a-3" {
		t.Fatalf("assistant message = %+v", msgs[1])
	}
	if msgs[2].Role != RoleUser || msgs[2].SourceKind() != SourceTool {
		t.Fatalf("tool result message = %+v", msgs[2])
	}
}

func TestDeriveMessagesSkipsAnEmptyAssistantMessage(t *testing.T) {
	events := []Event{
		userEv(0, "write a novel"),
		assistantEv(1, "", rawSrc(`[]`)), // max-tokens step that only hosts usage
		userEv(2, "shorter please"),
	}
	f := mustFold(t, events)
	if f.Surface(1) != SurfaceCurrent {
		t.Fatalf("empty assistant message must stay a surface node, got %s", f.Surface(1))
	}
	msgs, err := f.Messages()
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(msgs); !slices.Equal(got, []string{"user:write a novel", "user:shorter please"}) {
		t.Fatalf("history = %q", got)
	}
}

func TestDeriveMessagesCompactionReplaceShrinksHistory(t *testing.T) {
	events := []Event{
		userEv(0, "one"),
		assistantEv(1, "two"),
		userEv(2, "three"),
		assistantEv(3, "four"),
		logEv(4, TypeCompactionStart, nil),
		pluginUserEv(5, "summary of one..three", replace(0, 2), src(0, 1, 2)),
		logEv(6, TypeCompactionEnd, nil),
		userEv(7, "five"),
	}
	before, err := DeriveMessages(events[:4])
	if err != nil {
		t.Fatal(err)
	}
	after, err := DeriveMessages(events)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 4 || len(after) != 3 {
		t.Fatalf("history went from %d to %d messages, want 4 to 3", len(before), len(after))
	}
	want := []string{"user:summary of one..three", "assistant:four", "user:five"}
	if got := texts(after); !slices.Equal(got, want) {
		t.Fatalf("history = %q, want %q", got, want)
	}
}

func TestDeriveMessagesToolResultRewriteReplacesContentInPlace(t *testing.T) {
	events := []Event{
		userEv(0, "go"),
		toolResultEv(1, "c1", "huge output"),
		assistantEv(2, "ok"),
		toolResultEv(3, "c1", "[elided]", replace(1, 1), src(1)),
	}
	msgs, err := DeriveMessages(events)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user:go", "user:result(c1):[elided]", "assistant:ok"}
	if got := texts(msgs); !slices.Equal(got, want) {
		t.Fatalf("history = %q, want %q", got, want)
	}
}

func TestDeriveMessagesRefusesAnInvalidLog(t *testing.T) {
	_, err := DeriveMessages([]Event{userEv(0, "a"), userEv(1, "b", replace(0, 0))})
	var fe *FoldError
	if !errors.As(err, &fe) {
		t.Fatalf("DeriveMessages = %v, want a *FoldError", err)
	}
	bad := userEv(0, "a")
	bad.Data = []byte(`{"content":"not blocks"}`)
	if _, err := DeriveMessages([]Event{bad}); err == nil {
		t.Fatal("DeriveMessages accepted an undecodable user message")
	}
}

func TestLastStepStartFindsTheCurrentStepBoundary(t *testing.T) {
	events := []Event{
		logEv(0, TypeTurnStart, TurnStart{Turn: 1}),
		logEv(1, TypeStepStart, StepBoundary{Turn: 1, Step: 1}),
		logEv(2, TypeStepEnd, StepBoundary{Turn: 1, Step: 1}),
		logEv(3, TypeStepStart, StepBoundary{Turn: 1, Step: 2}),
		userEv(4, "steer"),
	}
	if got := LastStepStart(events); got != 3 {
		t.Fatalf("LastStepStart = %d, want 3", got)
	}
	if got := LastStepStart(events[:1]); got != -1 {
		t.Fatalf("LastStepStart without a step = %d, want -1", got)
	}
}
