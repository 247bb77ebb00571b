package agent

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// streamThenHang yields cs, signals streaming, then waits for cancellation.
func streamThenHang(streaming chan<- struct{}, cs ...llm.Chunk) script {
	return func(ctx context.Context, _ llm.Request, yield func(llm.Chunk) error) error {
		for _, c := range cs {
			if err := yield(c); err != nil {
				return err
			}
		}
		close(streaming)
		<-ctx.Done()
		return ctx.Err()
	}
}

func TestCancelMidStreamKeepsAnInterruptedAssistantMessage(t *testing.T) {
	streaming := make(chan struct{})
	p := newFakeProvider(t, streamThenHang(streaming,
		llm.Chunk{Type: llm.ChunkBlockStart, Index: 0, BlockType: session.BlockReasoning},
		llm.Chunk{Type: llm.ChunkReasoningDelta, Index: 0, Delta: "thinking"},
		llm.Chunk{Type: llm.ChunkBlockStart, Index: 1, BlockType: session.BlockText},
		llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Delta: "partial"},
		llm.Chunk{Type: llm.ChunkBlockStart, Index: 2, BlockType: session.BlockToolCall, ID: "c1", Name: "read"},
	))
	h := newHarness(t, p)
	h.agent.Followup(UserText("go", "p1"))
	<-streaming
	h.agent.Cancel(session.CancelCause{Kind: CauseUser})
	h.idle()

	ev := h.events()
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "step/end", "turn/end")
	chunksEv := ofType(ev, session.TypeAssistantChunk)
	last := decode[session.AssistantChunk](t, chunksEv[len(chunksEv)-1])
	if string(last.Chunk) != `{"type":"finish","kind":"aborted","failure":{"message":"model request cancelled (user)","code":"ABORTED"}}` {
		t.Errorf("closing chunk = %s", last.Chunk)
	}
	msgEv := ofType(ev, session.TypeAssistantMessage)[0]
	am := decode[session.AssistantMessage](t, msgEv)
	if !am.Interrupted || len(am.Message.Content) != 2 || session.JoinText(am.Message.Content) != "partial" ||
		am.Message.Content[0].Type != session.BlockReasoning {
		t.Errorf("interrupted message = %+v", am)
	}
	var seqs []int
	for _, e := range chunksEv {
		seqs = append(seqs, e.Seq)
	}
	if !slices.Equal(sources(t, msgEv), seqs) {
		t.Errorf("interrupted message sources %v, chunks %v", sources(t, msgEv), seqs)
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndAborted || r.Reason == nil || r.Reason.Kind != CauseUser {
		t.Errorf("turn/end = %+v", r)
	}
	// The interrupted text is history the next request carries.
	msgs, err := session.DeriveMessages(ev)
	if err != nil || len(msgs) != 2 {
		t.Errorf("derived history = %v, %v", msgs, err)
	}
	h.checkLog()
}

func TestCancelBeforeAnyTextKeepsNoAssistantMessage(t *testing.T) {
	streaming := make(chan struct{})
	p := newFakeProvider(t, streamThenHang(streaming))
	h := newHarness(t, p)
	h.agent.Followup(UserText("go", "p1"))
	<-streaming
	h.agent.Cancel(session.CancelCause{Kind: CauseParent, Reason: "parent stopped"})
	h.idle()
	expectTypes(t, h.events(), "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "step/end", "turn/end")
	if r := lastTurnEnd(t, h.events()); r.Reason == nil || *r.Reason != (session.CancelCause{Kind: CauseParent, Reason: "parent stopped"}) {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()
}

func TestCancelWithQueuedToolCallsRecordsAbortedPairs(t *testing.T) {
	g, tr := newGates(), &toolTrace{}
	g.hold("write X")
	p := newFakeProvider(t, toolReply(
		call("w", "write", `{"path":"X"}`),
		call("r1", "read", `{"path":"Y"}`),
		call("r2", "read", `{"path":"Z"}`),
	))
	h := newHarness(t, p, withTools(fileTools(t, g, tr)))
	h.agent.Followup(UserText("go", "p1"))
	g.expectStarted(t, "write X")
	h.agent.Cancel(session.CancelCause{Kind: CauseUser})
	h.idle()

	ev := h.events()
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message",
		"tool/call", "tool/result", "tool/call", "tool/result", "tool/call", "tool/result",
		"step/end", "turn/end")
	results := ofType(ev, session.TypeToolResult)
	// The running write saw the cancelled context; its success is superseded.
	want := []struct{ code, text string }{
		{tools.CodeAborted, "Error: tool call aborted"},
		{tools.CodeAbortedBeforeDispatch, "Error: tool call aborted before dispatch"},
		{tools.CodeAbortedBeforeDispatch, "Error: tool call aborted before dispatch"},
	}
	for i, w := range want {
		r := decode[session.ToolResult](t, results[i])
		block := r.Message.Content[0]
		if r.Error == nil || r.Error.Code != w.code || r.Error.Name != tools.NameAbort || !block.IsError ||
			session.JoinText(block.Content) != w.text {
			t.Errorf("result %d = %+v", i, r)
		}
	}
	if ops := tr.list(); !slices.Equal(ops, []string{"start write X", "end write X"}) {
		t.Errorf("tool bodies = %v", ops)
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndAborted {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()
}

func TestCancelDropsQueuedPromptsUnlessKept(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "dropped", true: "kept"}[keep], func(t *testing.T) {
			streaming := make(chan struct{})
			p := newFakeProvider(t, streamThenHang(streaming))
			h := newHarness(t, p)
			h.agent.Followup(UserText("first", "p1"))
			h.agent.Followup(UserText("second", "p2"))
			<-streaming
			var opts []CancelOption
			if keep {
				opts = append(opts, KeepQueued())
			}
			h.agent.Cancel(session.CancelCause{Kind: CauseUser}, opts...)
			h.idle()
			// Either way the cancelled agent stays idle: kept prompts wait
			// for the next wake.
			if n := len(ofType(h.events(), session.TypeTurnStart)); n != 1 {
				t.Fatalf("%d turns ran after cancel", n)
			}
			p.add(textReply("a"), textReply("b"))
			h.prompt("third")
			var prompts []string
			for _, e := range ofType(h.events(), session.TypeUserMessage) {
				prompts = append(prompts, session.JoinText(decode[session.Message](t, e).Content))
			}
			want := []string{"first", "third"}
			if keep {
				want = []string{"first", "second", "third"}
			}
			if !slices.Equal(prompts, want) {
				t.Errorf("prompts entered = %v, want %v", prompts, want)
			}
			if keep && p.pending() != 0 {
				t.Errorf("%d scripted calls left", p.pending())
			}
			h.checkLog()
		})
	}
}

func TestPromptSentAfterCancelRunsAsTheNextTurn(t *testing.T) {
	streaming := make(chan struct{})
	p := newFakeProvider(t, streamThenHang(streaming), textReply("fresh"))
	h := newHarness(t, p)
	h.agent.Followup(UserText("first", "p1"))
	<-streaming
	h.agent.Cancel(session.CancelCause{Kind: CauseUser})
	// Steering cannot join the aborted turn; it opens the next one.
	h.agent.Steer(UserText("instead do this", "p2"))
	h.idle()
	ev := h.events()
	starts := ofType(ev, session.TypeTurnStart)
	if len(starts) != 2 {
		t.Fatalf("%d turns\n%s", len(starts), dump(ev))
	}
	ends := ofType(ev, session.TypeTurnEnd)
	if a, b := decode[session.TurnEnd](t, ends[0]).Reason.Kind, decode[session.TurnEnd](t, ends[1]).Reason.Kind; a != session.EndAborted || b != session.EndCompleted {
		t.Errorf("turn ends = %s, %s", a, b)
	}
	h.checkLog()
}

func TestCloseDuringATurnEndsItAsDisposedAndStopsTheDriver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		streaming := make(chan struct{})
		p := newFakeProvider(t, streamThenHang(streaming, textChunks(0, "half")...))
		h := newHarness(t, p)
		var statuses []Status
		h.agent.OnStatus(func(s Status) { statuses = append(statuses, s) })
		h.agent.Followup(UserText("go", "p1"))
		<-streaming
		if err := h.agent.Close(); err != nil {
			t.Fatal(err)
		}
		ev := h.events()
		if r := lastTurnEnd(t, ev); r.Kind != session.EndAborted || r.Reason.Kind != CauseDisposed {
			t.Errorf("turn/end = %+v", r)
		}
		if ops := h.sink.log(); ops[len(ops)-1] != "flush" {
			t.Errorf("close did not flush last: %v", ops)
		}
		// A closed agent ignores new prompts and refuses to compact.
		h.agent.Followup(UserText("late", "p2"))
		if err := h.agent.Compact(context.Background()); err != ErrClosed {
			t.Errorf("Compact after Close = %v", err)
		}
		synctest.Wait()
		if n := len(h.events()); n != len(ev) {
			t.Errorf("closed agent appended %d events", n-len(ev))
		}
		if !slices.Equal(statuses, []Status{StatusRunning, StatusIdle}) {
			t.Errorf("statuses = %v", statuses)
		}
		h.checkLog()
	})
}
