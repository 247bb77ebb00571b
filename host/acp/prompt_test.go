package acp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestPromptStreamsDeltasInOrderAndAnswersEndTurnAfterThem(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(chunks(reasoningDelta("think"), reasoningDelta("ing"), textDelta("Hel"), textDelta(""), textDelta("lo"), finish("stop")))
	resp, err := h.prompt(id, "hi there")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason = %s", resp.StopReason)
	}
	got := kinds(h.c.take())
	want := []string{
		"session_info_update:hi there",
		"agent_thought_chunk:think", "agent_thought_chunk:ing",
		"agent_message_chunk:Hel", "agent_message_chunk:lo",
	}
	if !slices.Equal(got, want) {
		t.Errorf("updates = %v\nwant %v", got, want)
	}
}

func TestPromptToolCallsShowCardsAndResults(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	cwd := workspace(t)
	id := h.newSession(cwd)
	h.c.answer = selected(optionAllowOnce)
	w.provider.add(
		toolCalls("look", `{"path":"a.txt"}`, "look", `{"path":"b.txt"}`),
		toolCalls("change", `{"path":"a.txt"}`),
		toolCalls("run", `{"command":"ls"}`),
		reply("", "done"),
	)
	if _, err := h.prompt(id, "work"); err != nil {
		t.Fatal(err)
	}
	ns := h.c.take()
	got := kinds(ns)
	// Each call goes pending, in_progress once cleared to run (in model
	// order, parallel calls too), then completed.
	want := []string{
		"session_info_update:work",
		"tool_call:call_1:pending", "tool_call_update:call_1:in_progress",
		"tool_call:call_2:pending", "tool_call_update:call_2:in_progress",
		"tool_call_update:call_1:completed", "tool_call_update:call_2:completed",
		"tool_call:call_1:pending", "tool_call_update:call_1:in_progress", "tool_call_update:call_1:completed",
		"tool_call:call_1:pending", "tool_call_update:call_1:in_progress", "tool_call_update:call_1:completed",
		"agent_message_chunk:done",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("updates =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	look := ns[1].Update.ToolCall
	if look.Kind != sdk.ToolKindRead || look.Title != "Look a.txt" || len(look.Locations) != 1 ||
		look.Locations[0].Path != cwd+"/a.txt" || look.Locations[0].Line == nil || *look.Locations[0].Line != 3 {
		t.Errorf("look card = %+v", look)
	}
	if raw, _ := json.Marshal(look.RawInput); string(raw) != `{"path":"a.txt"}` {
		t.Errorf("rawInput = %s", raw)
	}
	if c := ns[5].Update.ToolCallUpdate.Content; len(c) != 1 || c[0].Content.Content.Text.Text != "looked at a.txt" {
		t.Errorf("look result content = %+v", c)
	}
	change, changed := ns[7].Update.ToolCall, ns[9].Update.ToolCallUpdate
	if change.Kind != sdk.ToolKindEdit || len(change.Content) != 1 || change.Content[0].Diff == nil || change.Content[0].Diff.NewText != "new\n" {
		t.Errorf("change card = %+v", change)
	}
	if len(changed.Content) != 1 || changed.Content[0].Diff == nil || *changed.Content[0].Diff.OldText != "old\n" {
		t.Errorf("a successful edit does not show its diff: %+v", changed.Content)
	}
	ran := ns[12].Update.ToolCallUpdate.Content[0].Content.Content.Text.Text
	if want := "````console\nran ```ok```\n[exit code: 0]\n````"; ran != want {
		t.Errorf("command output = %q, want %q", ran, want)
	}
	if n := len(h.c.permissionRequests()); n != 2 {
		t.Errorf("%d permission requests, want 2 (change and run)", n)
	}
}

func TestTodoWriteBecomesAPlan(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(toolCalls("plan", `{}`), reply("", "ok"))
	if _, err := h.prompt(id, "plan it"); err != nil {
		t.Fatal(err)
	}
	var plan *sdk.SessionUpdatePlan
	for _, n := range h.c.take() {
		if n.Update.Plan != nil {
			plan = n.Update.Plan
		}
	}
	if plan == nil {
		t.Fatal("no plan update")
	}
	var got []string
	for _, e := range plan.Entries {
		got = append(got, e.Content+":"+string(e.Status)+":"+string(e.Priority))
	}
	if want := []string{"read:completed:medium", "fix:in_progress:medium", "test:pending:medium"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v", got)
	}
}

func TestPromptRejectsEmptyUnsupportedAndUnknown(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	cases := []struct {
		name    string
		session sdk.SessionId
		content []sdk.ContentBlock
		want    string
	}{
		{"empty", id, []sdk.ContentBlock{}, "Invalid params: empty prompt"},
		{"whitespace", id, []sdk.ContentBlock{sdk.TextBlock(" \n\t")}, "Invalid params: empty prompt"},
		{"image", id, []sdk.ContentBlock{sdk.ImageBlock("aGk=", "image/png")}, "Invalid params: image prompt content is not supported"},
		{"audio", id, []sdk.ContentBlock{sdk.AudioBlock("aGk=", "audio/wav")}, "Invalid params: audio prompt content is not supported"},
		{"blob resource", id, []sdk.ContentBlock{sdk.ResourceBlock(sdk.EmbeddedResourceResource{BlobResourceContents: &sdk.BlobResourceContents{Blob: "aGk=", Uri: "file:///x.bin"}})},
			"Invalid params: prompt block 0 is a binary embedded resource, which is not supported; embed text or send a resource link"},
		{"unknown session", "nope", []sdk.ContentBlock{sdk.TextBlock("hi")}, "Resource not found: unknown session: nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.conn.Prompt(h.ctx, sdk.PromptRequest{SessionId: tc.session, Prompt: tc.content})
			code := -32602
			if strings.HasPrefix(tc.want, "Resource not found") {
				code = -32002
			}
			re, ok := err.(*sdk.RequestError)
			if !ok || re.Code != code || re.Message != tc.want {
				t.Fatalf("error = %v, want %d %q", err, code, tc.want)
			}
		})
	}
	if n := w.agent(string(id)).Session().Len(); n != 0 {
		t.Errorf("rejected prompts wrote %d events", n)
	}
}

func TestPromptFlattensResourceLinksAndEmbedsTextResources(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(reply("", "ok"))
	_, err := h.conn.Prompt(h.ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("compare "),
		sdk.ResourceLinkBlock("main.go", "file:///w/main.go"),
		sdk.TextBlock(" with"),
		sdk.ResourceLinkBlock("Terminal", "zed://terminal/1"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///w/<b>.go", Text: "package b\n"}}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, e := range w.agent(string(id)).Session().Events(0) {
		var m session.Message
		if e.Type == session.TypeUserMessage && e.DecodeData(&m) == nil && m.SourceKind() == session.SourceUser {
			text = session.JoinText(m.Content)
		}
	}
	want := "compare \n[resource_link name=\"main.go\" uri=\"file:///w/main.go\"]\n with" +
		"\n[resource_link name=\"Terminal\" uri=\"zed://terminal/1\" (an editor reference whose content was not sent)]\n" +
		"\n<context ref=\"file:///w/<b>.go\">\npackage b\n</context>\n"
	if text != want {
		t.Errorf("prompt text = %q\nwant %q", text, want)
	}
}

func TestCancelMidStreamDeliversFinalUpdatesAndAnswersCancelled(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(hang)
	streamed := make(chan struct{}, 1)
	h.c.onUpdate = func(n sdk.SessionNotification) {
		if n.Update.AgentMessageChunk != nil {
			streamed <- struct{}{}
		}
	}
	type answer struct {
		resp sdk.PromptResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := h.prompt(id, "go")
		done <- answer{resp, err}
	}()
	<-streamed
	if err := h.conn.Cancel(h.ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil || a.resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("answer = %v, %v", a.resp.StopReason, a.err)
	}
	var interrupted bool
	for _, e := range w.agent(string(id)).Session().Events(0) {
		var m session.AssistantMessage
		if e.Type == session.TypeAssistantMessage && e.DecodeData(&m) == nil && m.Interrupted {
			interrupted = session.JoinText(m.Message.Content) == "partial"
		}
	}
	if !interrupted {
		t.Error("the streamed text was not kept as an interrupted message")
	}
	// The session is usable afterwards.
	w.provider.add(reply("", "fine"))
	if resp, err := h.prompt(id, "again"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("next prompt = %v, %v", resp.StopReason, err)
	}
}

func TestCancelWhileApprovalIsPendingFailsTheQueuedCalls(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(toolCalls("change", `{"path":"a.txt"}`, "look", `{"path":"a.txt"}`))
	asked := make(chan struct{})
	release := make(chan struct{})
	h.c.answer = func(sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
		close(asked)
		<-release
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, _ := h.prompt(id, "go")
		done <- resp
	}()
	<-asked
	if err := h.conn.Cancel(h.ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if resp := <-done; resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("stop reason = %s", resp.StopReason)
	}
	got := kinds(h.c.take())
	// Neither call ever ran: pending, then failed.
	want := []string{"session_info_update:go", "tool_call:call_1:pending", "tool_call_update:call_1:failed", "tool_call:call_2:pending", "tool_call_update:call_2:failed"}
	if !slices.Equal(got, want) {
		t.Errorf("updates = %v\nwant %v", got, want)
	}
}

func TestNewPromptWithoutCancelCancelsTheRunningOne(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(hang, reply("", "second"))
	streamed := make(chan struct{}, 4)
	h.c.onUpdate = func(n sdk.SessionNotification) {
		if n.Update.AgentMessageChunk != nil {
			streamed <- struct{}{}
		}
	}
	first := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := h.prompt(id, "first")
		if err != nil {
			t.Errorf("first prompt: %v", err)
		}
		first <- resp
	}()
	<-streamed
	resp, err := h.prompt(id, "second")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("second = %v, %v", resp.StopReason, err)
	}
	if r := <-first; r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("first = %s, want cancelled", r.StopReason)
	}
	got := kinds(h.c.take())
	if want := []string{"session_info_update:first", "agent_message_chunk:partial", "agent_message_chunk:second"}; !slices.Equal(got, want) {
		t.Errorf("updates = %v, want %v", got, want)
	}
}

func TestStopReasons(t *testing.T) {
	cases := []struct {
		name    string
		calls   []call
		want    sdk.StopReason
		wantErr string
	}{
		{"completed", []call{reply("", "ok")}, sdk.StopReasonEndTurn, ""},
		{"max tokens", []call{chunks(textDelta("cut"), finish(llm.FinishMaxTokens))}, sdk.StopReasonMaxTokens, ""},
		{"provider error", []call{func(context.Context, func(llm.Chunk) error) error {
			return &llm.Error{Failure: session.Failure{Code: llm.CodeAuth, Message: "simulated provider error (HTTP 401)", Status: 401}}
		}}, "", "Internal error: turn failed: simulated provider error (HTTP 401)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			h := start(t, w)
			id := h.newSession(workspace(t))
			w.provider.add(tc.calls...)
			resp, err := h.prompt(id, "go")
			if tc.wantErr != "" {
				re, ok := err.(*sdk.RequestError)
				if !ok || re.Code != -32603 || re.Message != tc.wantErr {
					t.Fatalf("error = %v, want -32603 %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || resp.StopReason != tc.want {
				t.Fatalf("answer = %v, %v; want %s", resp.StopReason, err, tc.want)
			}
		})
	}
}

func TestRetryShowsABracketedNotice(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(chunks(finish(llm.FinishStop)), reply("", "second try"))
	if _, err := h.prompt(id, "go"); err != nil {
		t.Fatal(err)
	}
	got := kinds(h.c.take())
	want := []string{
		"session_info_update:go",
		"agent_message_chunk:[model request failed: model returned a completed response with no content; retry 1 of 2 in 1ms]\n\n",
		"agent_message_chunk:second try",
	}
	if !slices.Equal(got, want) {
		t.Errorf("updates = %q\nwant %q", got, want)
	}
}

func TestRetryNoticeAfterPartialTextStartsOnItsOwnLine(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	failed := llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishError, Failure: &session.Failure{Code: llm.CodeServer, Message: "overloaded"}}
	w.provider.add(chunks(textDelta("Hal"), failed), reply("", "Hello"))
	if _, err := h.prompt(id, "go"); err != nil {
		t.Fatal(err)
	}
	got := kinds(h.c.take())
	want := []string{
		"session_info_update:go",
		"agent_message_chunk:Hal",
		"agent_message_chunk:\n\n[model request failed: overloaded; retry 1 of 2 in 1ms]\n\n",
		"agent_message_chunk:Hello",
	}
	if !slices.Equal(got, want) {
		t.Errorf("updates = %q\nwant %q", got, want)
	}
}

// Two sessions of one connection prompt at the same time; each gets its own
// updates and answer.
func TestSessionsOfOneConnectionRunConcurrently(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	a, b := h.newSession(workspace(t)), h.newSession(workspace(t))
	release := make(chan struct{})
	waiting := make(chan struct{}, 2)
	gated := func(text string) call {
		return func(ctx context.Context, yield func(llm.Chunk) error) error {
			waiting <- struct{}{}
			<-release
			return reply("", text)(ctx, yield)
		}
	}
	w.provider.add(gated("from one"), gated("from two"))
	type answer struct {
		id  sdk.SessionId
		err error
	}
	done := make(chan answer, 2)
	for _, id := range []sdk.SessionId{a, b} {
		go func() {
			_, err := h.prompt(id, "go")
			done <- answer{id, err}
		}()
	}
	<-waiting
	<-waiting // both model calls are in flight at once
	close(release)
	for range 2 {
		if r := <-done; r.err != nil {
			t.Fatalf("%s: %v", r.id, r.err)
		}
	}
	texts := map[sdk.SessionId][]string{}
	for _, n := range h.c.take() {
		if n.Update.AgentMessageChunk != nil {
			texts[n.SessionId] = append(texts[n.SessionId], n.Update.AgentMessageChunk.Content.Text.Text)
		}
	}
	if len(texts[a]) != 1 || len(texts[b]) != 1 || texts[a][0] == texts[b][0] {
		t.Errorf("replies = %v", texts)
	}
}
