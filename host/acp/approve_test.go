package acp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// lastResult returns the text and error flag of the session's last tool
// result.
func lastResult(t *testing.T, w *world, id sdk.SessionId) (string, bool) {
	t.Helper()
	var text string
	var isErr bool
	for _, e := range w.agent(string(id)).Session().Events(0) {
		var r session.ToolResult
		if e.Type == session.TypeToolResult && e.DecodeData(&r) == nil {
			b := r.Message.Content[0]
			text, isErr = session.JoinText(b.Content), b.IsError
		}
	}
	return text, isErr
}

func TestApprovalOutcomes(t *testing.T) {
	cases := []struct {
		name     string
		answer   func(sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error)
		wantErr  bool
		wantText string
	}{
		{"allow once", selected(optionAllowOnce), false, "changed a.txt"},
		{"reject", selected(optionReject), true, "the user rejected tool \"change\""},
		{"cancelled", nil, true, "approval for tool \"change\" was cancelled"},
		{"request fails", func(sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
			return sdk.RequestPermissionResponse{}, errors.New("editor went away")
		}, true, "asking the user to approve tool \"change\" failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			h := start(t, w)
			cwd := workspace(t)
			id := h.newSession(cwd)
			h.c.answer = tc.answer
			w.provider.add(toolCalls("change", `{"path":"a.txt"}`), reply("", "ok"))
			if resp, err := h.prompt(id, "go"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("answer = %v, %v", resp.StopReason, err)
			}
			text, isErr := lastResult(t, w, id)
			if isErr != tc.wantErr || !strings.Contains(text, tc.wantText) {
				t.Errorf("result = %q (error %v), want %q (error %v)", text, isErr, tc.wantText, tc.wantErr)
			}
			reqs := h.c.permissionRequests()
			if len(reqs) != 1 {
				t.Fatalf("%d permission requests", len(reqs))
			}
			p := reqs[0]
			var opts []string
			for _, o := range p.Options {
				opts = append(opts, string(o.OptionId)+"/"+string(o.Kind))
			}
			if want := []string{"allow-once/allow_once", "allow-always/allow_always", "reject-once/reject_once"}; !slices.Equal(opts, want) {
				t.Errorf("options = %v", opts)
			}
			tc := p.ToolCall
			if tc.ToolCallId != "call_1" || tc.Title == nil || *tc.Title != "Change a.txt" || tc.Kind == nil || *tc.Kind != sdk.ToolKindEdit ||
				len(tc.Content) != 1 || tc.Content[0].Diff == nil {
				t.Errorf("permission tool call = %+v", tc)
			}
		})
	}
}

func TestAllowAlwaysIsRememberedForTheSession(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	h.c.answer = selected(optionAllowAlways)
	w.provider.add(toolCalls("change", `{"path":"a.txt"}`), toolCalls("change", `{"path":"a.txt"}`), reply("", "ok"))
	if _, err := h.prompt(id, "go"); err != nil {
		t.Fatal(err)
	}
	if n := len(h.c.permissionRequests()); n != 1 {
		t.Errorf("%d permission requests, want 1", n)
	}
	if text, isErr := lastResult(t, w, id); isErr || text != "changed a.txt" {
		t.Errorf("second call = %q (error %v)", text, isErr)
	}
}

// On the wire, the permission request follows the tool_call update of its
// call. (The SDK client may dispatch a request before a notification that
// preceded it, so the order is checked on the bytes.)
func TestPermissionRequestComesAfterTheCallCard(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	h.c.answer = selected(optionAllowOnce)
	w.provider.add(toolCalls("run", `{"command":"ls"}`), reply("", "ok"))
	if _, err := h.prompt(id, "go"); err != nil {
		t.Fatal(err)
	}
	wire := h.wire.String()
	card := strings.Index(wire, `"sessionUpdate":"tool_call"`)
	ask := strings.Index(wire, `"method":"session/request_permission"`)
	if card < 0 || ask < 0 || card > ask {
		t.Errorf("tool_call at %d, request_permission at %d in:\n%s", card, ask, wire)
	}
}

type stubApprover struct{ calls int }

func (s *stubApprover) Approve(context.Context, *tools.Call, string) (string, error) {
	s.calls++
	return tools.AllowedOnce, nil
}

// Calls of sessions the connection does not own go to the approver that
// was installed before Serve.
func TestApproverDelegatesForeignSessions(t *testing.T) {
	w := newWorld(t)
	prev := &stubApprover{}
	w.tools.SetApprover(prev)
	h := start(t, w)
	h.newSession(workspace(t))
	foreign := session.NewLive(session.Header{ID: "foreign"}, nil, session.LiveOptions{})
	outcome, err := w.tools.Approver().Approve(context.Background(), &tools.Call{CallID: "c", Name: "run", Session: foreign}, "why")
	if err != nil || outcome != tools.AllowedOnce || prev.calls != 1 {
		t.Errorf("delegated = %q, %v (previous approver called %d times)", outcome, err, prev.calls)
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if w.tools.Approver() != prev {
		t.Error("Serve did not restore the previous approver")
	}
}
