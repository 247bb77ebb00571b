package acp

import (
	"slices"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func usageChunk(in, cache, out int) llm.Chunk {
	return llm.Chunk{Type: llm.ChunkUsage, Usage: &session.Usage{InputTokens: in, CacheReadTokens: cache, OutputTokens: out}}
}

// Every model step reports the context it used against the model's window;
// a load reports the last one.
func TestUsageUpdatesAfterEachStepAndOnLoad(t *testing.T) {
	w := newWorld(t)
	h := start(t, w, func(su *setup) {
		su.b.Models = []llm.ModelInfo{{ID: "fake-small", Name: "Fake Small", ContextWindow: 64000}}
	})
	cwd := workspace(t)
	id := h.newSession(cwd)
	w.provider.add(
		chunks(toolDelta(0, "call_1", "look", `{"path":"a.txt"}`), usageChunk(1000, 0, 20), finish(llm.FinishToolCalls)),
		chunks(textDelta("It says a."), usageChunk(300, 1000, 10), finish(llm.FinishStop)),
	)
	if _, err := h.prompt(id, "read a.txt"); err != nil {
		t.Fatal(err)
	}
	got := kinds(h.c.take())
	want := []string{
		"session_info_update:read a.txt",
		"usage_update:1020/64000", "tool_call:call_1:pending",
		"tool_call_update:call_1:in_progress", "tool_call_update:call_1:completed",
		"agent_message_chunk:It says a.", "usage_update:1310/64000",
	}
	if !slices.Equal(got, want) {
		t.Errorf("updates = %q\nwant %q", got, want)
	}
	if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replay := kinds(h.c.take())
	if n := len(replay); n == 0 || replay[n-1] != "usage_update:1310/64000" {
		t.Errorf("load = %q, want it to end with the last usage", replay)
	}
}

// Without a known context window there is no usage update: size is
// required, and 0 would read as a full context.
func TestNoUsageUpdateWithoutAContextWindow(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(chunks(textDelta("hi"), usageChunk(10, 0, 1), finish(llm.FinishStop)))
	if _, err := h.prompt(id, "hello"); err != nil {
		t.Fatal(err)
	}
	for _, n := range h.c.take() {
		if n.Update.UsageUpdate != nil {
			t.Errorf("usage update without a window: %+v", n.Update.UsageUpdate)
		}
	}
}
