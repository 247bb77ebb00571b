package sessionquery

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func mixedBlocks() []session.ContentBlock {
	return []session.ContentBlock{
		session.TextBlock(" visible "),
		session.ReasoningBlock("thought"),
		session.ToolCallBlock("c1", "read", `{"path":"a"}`),
		session.ToolResultBlock("c1", []session.ContentBlock{session.TextBlock("nested")}, false),
		{Type: "mystery", Raw: json.RawMessage(`{"type":"mystery","text":"hidden"}`)},
	}
}

func TestExtractTextJoinsVisibleContentAndSkipsReasoningAndUnknownBlocks(t *testing.T) {
	want := "visible\nread\n{\"path\":\"a\"}\nnested"
	plugin := userData(mixedBlocks()...)
	plugin.Source = session.PluginSource("memory", "context")
	cases := []struct {
		name string
		e    session.Event
	}{
		{"user message", ev(0, session.TypeUserMessage, userData(mixedBlocks()...))},
		{"assistant message", ev(0, session.TypeAssistantMessage, assistantData(mixedBlocks()...))},
		{"plugin-source user message", ev(0, session.TypeUserMessage, plugin)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExtractText(tc.e); got != want {
				t.Fatalf("ExtractText = %q, want %q", got, want)
			}
		})
	}
}

func TestExtractTextPerEventType(t *testing.T) {
	errorEnd := session.TurnEnd{Reason: session.TurnEndReason{Kind: session.EndError, Error: &session.Failure{Message: "boom", Code: "E"}}}
	abortedEnd := session.TurnEnd{Reason: session.TurnEndReason{Kind: session.EndAborted, Reason: &session.CancelCause{Kind: "user", Reason: "secret cause"}}}
	cases := []struct {
		name string
		e    session.Event
		want string
	}{
		{"reasoning-only assistant", ev(0, session.TypeAssistantMessage, assistantData(session.ReasoningBlock("private"))), ""},
		{"tool call", ev(0, session.TypeToolCall, session.ToolCall{CallID: "c", Name: "bash", Arguments: `{"cmd":"pwd"}`}), "bash\n{\"cmd\":\"pwd\"}"},
		{"tool call with object arguments", session.Event{Type: session.TypeToolCall, Data: json.RawMessage(`{"name":"bash","arguments":{"cmd":"ls"}}`)}, "bash\n{\"cmd\":\"ls\"}"},
		{"tool result with error", ev(0, session.TypeToolResult, toolResultData("failed", &session.ToolErrorInfo{Name: "Oops", Code: "E_OOPS"})), "failed\nOops\nE_OOPS"},
		{"tool result without content", ev(0, session.TypeToolResult, toolResultData("", nil)), ""},
		{"todo write", ev(0, session.TypeTodoWrite, session.TodoWrite{Todos: []session.Todo{{Content: "ship search", Status: session.TodoInProgress}}}), "in_progress\nship search"},
		{"turn end error", ev(0, session.TypeTurnEnd, errorEnd), "error\nboom"},
		{"turn end aborted hides its cause", ev(0, session.TypeTurnEnd, abortedEnd), "aborted"},
		{"turn end max-tokens", ev(0, session.TypeTurnEnd, turnEnd(session.EndMaxTokens)), "max-tokens"},
		{"turn end interrupted", ev(0, session.TypeTurnEnd, turnEnd(session.EndInterrupted)), "interrupted"},
		{"turn end completed", ev(0, session.TypeTurnEnd, turnEnd(session.EndCompleted)), ""},
		{"turn end blocked", ev(0, session.TypeTurnEnd, turnEnd(session.EndBlocked)), ""},
		{"turn end unknown kind", ev(0, session.TypeTurnEnd, turnEnd("future")), ""},
		{"turn start", ev(0, session.TypeTurnStart, session.TurnStart{}), ""},
		{"step start", ev(0, session.TypeStepStart, session.StepBoundary{}), ""},
		{"step end", ev(0, session.TypeStepEnd, session.StepBoundary{}), ""},
		{"assistant chunk", ev(0, session.TypeAssistantChunk, session.AssistantChunk{Chunk: json.RawMessage(`{"type":"text","text":"chunky"}`)}), ""},
		{"request header", ev(0, session.TypeRequestHeader, session.RequestHeader{Header: session.EpochHeader{System: "system prompt"}}), ""},
		{"session title", ev(0, session.TypeSessionTitle, session.SessionTitle{Title: "a title", MessageSeqs: []int{}, Source: json.RawMessage(`{"kind":"user"}`)}), ""},
		{"unknown type", ev(0, "plugin/thing", map[string]string{"text": "invisible"}), ""},
		{"malformed user message", session.Event{Type: session.TypeUserMessage, Data: json.RawMessage(`"nope"`)}, ""},
		{"malformed block beside a good one", session.Event{Type: session.TypeUserMessage, Data: json.RawMessage(`{"content":[{"type":"text"},{"type":"text","text":"kept"}]}`)}, "kept"},
		{"tool result with string content from older writers", session.Event{Type: session.TypeToolResult, Data: json.RawMessage(`{"message":{"content":[{"type":"tool-result","toolCallId":"c","content":" plain "}]},"error":{"name":"E","code":""}}`)}, "plain\nE"},
		{"malformed nested block beside a good one", session.Event{Type: session.TypeAssistantMessage, Data: json.RawMessage(`{"message":{"content":[{"type":"tool-result","content":[{"type":"text","text":7},{"type":"text","text":"ok"}]},{"type":"text","text":"after"}]}}`)}, "ok\nafter"},
		{"javascript whitespace is trimmed", ev(0, session.TypeUserMessage, userText("\uFEFF\u3000 hi \u00A0")), "hi"},
		{"U+0085 is not whitespace", ev(0, session.TypeUserMessage, userText("\u0085hi")), "\u0085hi"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExtractText(tc.e); got != tc.want {
				t.Fatalf("ExtractText = %q, want %q", got, tc.want)
			}
		})
	}
}

// classifiedLog is [user append, chunk, assistant replace[0..0] src[0],
// turn/end interrupted].
func classifiedLog() []session.Event {
	return []session.Event{
		ev(0, session.TypeUserMessage, userText("Hello\n(AI)+")),
		ev(1, session.TypeAssistantChunk, session.AssistantChunk{Chunk: json.RawMessage(`{}`)}),
		ev(2, session.TypeAssistantMessage, assistantText("replacement"),
			session.WithSurface(session.OpReplace(0, 0)), session.WithSources(0)),
		ev(3, session.TypeTurnEnd, turnEnd(session.EndInterrupted)),
	}
}

func TestBuildDocumentsClassifiesAndKeepsOnlyEventsWithText(t *testing.T) {
	events := classifiedLog()
	records, err := ClassifyEvents("s", events)
	if err != nil {
		t.Fatal(err)
	}
	var surfaces []string
	for _, r := range records {
		surfaces = append(surfaces, r.Surface)
	}
	if want := []string{SurfaceShadowed, SurfaceLogOnly, SurfaceCurrent, SurfaceLogOnly}; !slices.Equal(surfaces, want) {
		t.Fatalf("surfaces = %v, want %v", surfaces, want)
	}
	docs, err := BuildDocuments("s", events)
	if err != nil {
		t.Fatal(err)
	}
	want := []Document{
		{EventRecord{"s", 0, session.TypeUserMessage, 1000, SurfaceShadowed}, "Hello\n(AI)+"},
		{EventRecord{"s", 2, session.TypeAssistantMessage, 1002, SurfaceCurrent}, "replacement"},
		{EventRecord{"s", 3, session.TypeTurnEnd, 1003, SurfaceLogOnly}, "interrupted"},
	}
	if !slices.Equal(docs, want) {
		t.Fatalf("documents = %+v, want %+v", docs, want)
	}
}

func TestBuildDocumentsRejectsAReplaceOfAMissingRange(t *testing.T) {
	events := []session.Event{
		ev(0, session.TypeUserMessage, userText("a")),
		ev(1, session.TypeAssistantMessage, assistantText("b"), session.WithSurface(session.OpReplace(5, 6)), session.WithSources(0)),
	}
	_, err := BuildDocuments("s", events)
	qe := wantCode(t, err, CodeInvalidSurface)
	if want := "invalid session surface: "; len(qe.Message) <= len(want) || qe.Message[:len(want)] != want {
		t.Fatalf("message = %q, want prefix %q", qe.Message, want)
	}
	if _, err := ClassifyEvents("s", events); err == nil {
		t.Fatal("ClassifyEvents accepted an invalid surface")
	}
}

func TestBuildDocumentsOfAnEmptyLogIsAnEmptyList(t *testing.T) {
	docs, err := BuildDocuments("s", nil)
	if err != nil || docs == nil || len(docs) != 0 {
		t.Fatalf("BuildDocuments(nil) = %#v, %v; want an empty non-nil list", docs, err)
	}
}
