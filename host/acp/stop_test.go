package acp

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestStopReasonMapping(t *testing.T) {
	cause := func(kind string) *session.CancelCause { return &session.CancelCause{Kind: kind} }
	cases := []struct {
		name      string
		end       *session.TurnEndReason
		cancelled bool
		want      sdk.StopReason
		wantErr   string
	}{
		{"completed", &session.TurnEndReason{Kind: session.EndCompleted}, false, sdk.StopReasonEndTurn, ""},
		{"blocked", &session.TurnEndReason{Kind: session.EndBlocked}, false, sdk.StopReasonEndTurn, ""},
		{"max tokens", &session.TurnEndReason{Kind: session.EndMaxTokens}, false, sdk.StopReasonMaxTokens, ""},
		{"interrupted", &session.TurnEndReason{Kind: session.EndInterrupted}, false, sdk.StopReasonCancelled, ""},
		{"aborted by the user", &session.TurnEndReason{Kind: session.EndAborted, Reason: cause(agent.CauseUser)}, false, sdk.StopReasonCancelled, ""},
		{"disposed", &session.TurnEndReason{Kind: session.EndAborted, Reason: cause(agent.CauseDisposed)}, false, sdk.StopReasonCancelled, ""},
		{"aborted by a hook", &session.TurnEndReason{Kind: session.EndAborted, Reason: cause(agent.CauseHook)}, false, sdk.StopReasonEndTurn, ""},
		{"never started", nil, false, sdk.StopReasonCancelled, ""},
		{"cancel wins over completion", &session.TurnEndReason{Kind: session.EndCompleted}, true, sdk.StopReasonCancelled, ""},
		{"error", &session.TurnEndReason{Kind: session.EndError, Error: &session.Failure{Code: "SERVER", Message: "boom"}}, false, "", "Internal error: turn failed: boom"},
		{"error without detail", &session.TurnEndReason{Kind: session.EndError}, false, "", "Internal error: turn failed: the turn ended with an error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := stopReason(tc.end, tc.cancelled)
			if tc.wantErr != "" {
				re, ok := err.(*sdk.RequestError)
				if !ok || re.Code != -32603 || re.Message != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || resp.StopReason != tc.want {
				t.Fatalf("= %v, %v; want %s", resp.StopReason, err, tc.want)
			}
		})
	}
}

func TestGateDropsSDKLogsOnceShut(t *testing.T) {
	var buf bytes.Buffer
	g, shut := newGate(slog.NewTextHandler(&buf, nil))
	log := slog.New(g).With("component", "sdk").WithGroup("conn")
	log.Info("before")
	shut()
	log.Info("after")
	if out := buf.String(); !strings.Contains(out, "before") || strings.Contains(out, "after") {
		t.Errorf("log = %q", out)
	}
}

func TestCloseSessionCancelsItsRunningPrompt(t *testing.T) {
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
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, _ := h.prompt(id, "go")
		done <- resp
	}()
	<-streamed
	if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if resp := <-done; resp.StopReason != sdk.StopReasonCancelled {
		t.Errorf("prompt = %s, want cancelled", resp.StopReason)
	}
}

// A compaction's summary call streams nothing to the client; the turn's
// own deltas do.
func TestCompactionChunksAreNotConversation(t *testing.T) {
	live := session.NewLive(session.Header{ID: "s"}, nil, session.LiveOptions{})
	tr := newTranslator(nil, live, nil, nil)
	chunk := func(step int, delta string) session.Event {
		return session.Event{Type: session.TypeAssistantChunk, Data: session.MustMarshal(session.AssistantChunk{
			Turn: 1, Step: step, Chunk: session.MustMarshal(map[string]any{"type": "text-delta", "index": 0, "delta": delta}),
		})}
	}
	var got []string
	for _, e := range []session.Event{
		{Type: session.TypeCompactionStart, Data: []byte(`{}`)},
		chunk(0, "summary"),
		chunk(1, "inside a compaction"),
		{Type: session.TypeCompactionEnd, Data: []byte(`{}`)},
		chunk(0, "a summary call outside one"),
		chunk(2, "reply"),
	} {
		for _, u := range tr.stream(e) {
			got = append(got, u.AgentMessageChunk.Content.Text.Text)
		}
	}
	if strings.Join(got, "|") != "reply" {
		t.Errorf("streamed %q", got)
	}
}
