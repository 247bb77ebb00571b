package acp

import (
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// A reply the provider's content filter stopped answers "refusal", with
// what the provider said as an agent message after the partial text, live
// and on load.
func TestContentFilterStopIsARefusal(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	cwd := workspace(t)
	id := h.newSession(cwd)
	w.provider.add(chunks(textDelta("Here is how"), llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishError,
		Failure: &session.Failure{Code: llm.CodeContentFilter, Message: "model stopped: content_filter"}}))
	resp, err := h.prompt(id, "tell me")
	if err != nil || resp.StopReason != sdk.StopReasonRefusal {
		t.Fatalf("answer = %v, %v; want refusal", resp.StopReason, err)
	}
	notice := "agent_message_chunk:\n\n[the provider refused to continue: model stopped: content_filter]\n\n"
	got := kinds(h.c.take())
	if want := []string{"session_info_update:tell me", "agent_message_chunk:Here is how", notice}; !slices.Equal(got, want) {
		t.Errorf("live updates = %q\nwant %q", got, want)
	}
	if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if got := kinds(h.c.take()); !slices.Contains(got, notice) {
		t.Errorf("replay = %q, want the refusal notice", got)
	}
}

// session/list takes no params at all, or null, since all its fields are
// optional.
func TestListSessionsAcceptsOmittedParams(t *testing.T) {
	w := newWorld(t)
	r := startRaw(t, w)
	for i, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/list","params":null}`,
	} {
		r.send(line)
		f := r.next()
		res, ok := f["result"].(map[string]any)
		if f["id"] != float64(i+1) || !ok {
			t.Fatalf("answer = %v", f)
		}
		if s, ok := res["sessions"].([]any); !ok || len(s) != 0 {
			t.Errorf("sessions = %v, want []", res["sessions"])
		}
	}
}

// A call that needs approval is pending while the user decides, in
// progress once allowed, then completed.
func TestApprovedCallGoesPendingInProgressCompleted(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	h.c.answer = func(p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
		if p.ToolCall.Status == nil || *p.ToolCall.Status != sdk.ToolCallStatusPending {
			t.Errorf("permission request status = %v, want pending", p.ToolCall.Status)
		}
		return selected(optionAllowOnce)(p)
	}
	w.provider.add(toolCalls("change", `{"path":"a.txt"}`), reply("", "ok"))
	if _, err := h.prompt(id, "go"); err != nil {
		t.Fatal(err)
	}
	// in_progress comes once the pipeline cleared the call, after the
	// user allowed it.
	if got, want := statusesOf(h.c.take(), "call_1"), []string{"pending", "in_progress", "completed"}; !slices.Equal(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
}

// On load a write or edit shows the change its logged call made, not a
// preview against today's disk.
func TestLoadReplaysEditsAsDiffs(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	cwd := workspace(t)
	id := h.newSession(cwd)
	h.c.answer = selected(optionAllowOnce)
	w.provider.add(toolCalls("change", `{"path":"a.txt"}`), reply("", "ok"))
	if _, err := h.prompt(id, "go"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	h.c.take()
	if _, err := h.conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var diff *sdk.ToolCallContentDiff
	for _, n := range h.c.take() {
		if u := n.Update.ToolCallUpdate; u != nil && len(u.Content) == 1 {
			diff = u.Content[0].Diff
		}
	}
	if diff == nil || diff.Path != cwd+"/a.txt" || diff.OldText == nil || *diff.OldText != "logged old\n" || diff.NewText != "logged new\n" {
		t.Fatalf("replayed result content = %+v, want the logged diff", diff)
	}
}

// Requests naming a session the connection does not have get ACP's
// "resource not found".
func TestUnknownSessionIsResourceNotFound(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	_, err := h.conn.SetSessionMode(h.ctx, sdk.SetSessionModeRequest{SessionId: "nope", ModeId: "default"})
	if re, ok := err.(*sdk.RequestError); !ok || re.Code != -32002 || !strings.Contains(re.Message, "unknown session: nope") {
		t.Errorf("set_mode on an unknown session: %v", err)
	}
}
