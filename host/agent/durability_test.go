package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// collapsed returns sink operations with assistant/chunk runs collapsed.
func collapsed(ops []string) []string {
	var out []string
	for _, op := range ops {
		if op == session.TypeAssistantChunk {
			if len(out) > 0 && out[len(out)-1] == "assistant/chunk*" {
				continue
			}
			op = "assistant/chunk*"
		}
		out = append(out, op)
	}
	return out
}

func TestFlushBarriersPrecedeRequestsAndSideEffectingTools(t *testing.T) {
	g := newGates()
	p := newFakeProvider(t,
		toolReply(call("r", "read", `{"path":"A"}`)),
		toolReply(call("w", "write", `{"path":"A"}`)),
		textReply("done"))
	h := newHarness(t, p, withTools(fileTools(t, g, &toolTrace{})))
	h.prompt("edit A")
	want := []string{
		"turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"flush", "assistant/chunk*", "assistant/message",
		"tool/call", "tool/result", // a read needs no barrier
		"step/end", "step/start",
		"flush", "assistant/chunk*", "assistant/message",
		"tool/call", "flush", "tool/result", // the write's call is on disk before it runs
		"step/end", "step/start",
		"flush", "assistant/chunk*", "assistant/message", "step/end", "turn/end",
	}
	if got := collapsed(h.sink.log()); !slices.Equal(got, want) {
		t.Errorf("sink operations\n got %q\nwant %q", got, want)
	}
}

func TestFlushFailureBeforeARequestEndsTheTurnWithAWriteError(t *testing.T) {
	p := newFakeProvider(t)
	h := newHarness(t, p)
	h.sink.setFlushErr(errInjected)
	h.prompt("go")
	ev := h.events()
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context", "step/end", "turn/end")
	r := lastTurnEnd(t, ev)
	if r.Kind != session.EndError || r.Error.Code != CodeSessionWrite ||
		!strings.Contains(r.Error.Message, "could not be written") || !strings.Contains(r.Error.Message, errInjected.Error()) {
		t.Errorf("turn/end = %+v", r.Error)
	}
	if n := len(p.requests()); n != 0 {
		t.Errorf("%d requests were sent without a durable log", n)
	}
}

func TestFlushFailureBeforeASideEffectingToolNeverRunsIt(t *testing.T) {
	tr := &toolTrace{}
	p := newFakeProvider(t, toolReply(
		call("r", "read", `{"path":"A"}`),
		call("w", "write", `{"path":"A"}`),
		call("r2", "read", `{"path":"B"}`),
	))
	h := newHarness(t, p, withTools(fileTools(t, newGates(), tr)))
	// Fail every flush from the write's tool/call on.
	h.sink.appendErr = func(e session.Event) error {
		if e.Type == session.TypeToolCall && strings.Contains(string(e.Data), `"name":"write"`) {
			h.sink.flushErr = errInjected
		}
		return nil
	}
	h.prompt("go")
	ev := h.events()
	expectTypes(t, ev, "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message",
		"tool/call", "tool/result", "tool/call", "tool/result", "tool/call", "tool/result",
		"step/end", "turn/end")
	if ops := tr.list(); !slices.Equal(ops, []string{"start read A", "end read A"}) {
		t.Errorf("tool bodies that ran: %v", ops)
	}
	results := ofType(ev, session.TypeToolResult)
	notRun := decode[session.ToolResult](t, results[1])
	if notRun.Error == nil || notRun.Error.Code != CodeSessionWrite ||
		session.JoinText(notRun.Message.Content[0].Content) != "Error: tool call not run: the session log could not be written" {
		t.Errorf("write result = %+v", notRun)
	}
	if skipped := decode[session.ToolResult](t, results[2]); skipped.Error == nil || skipped.Error.Code != "ABORTED_BEFORE_DISPATCH" {
		t.Errorf("unstarted read result = %+v", skipped)
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndError || r.Error.Code != CodeSessionWrite {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()
}

func TestAppendFailureEndsTheTurnAndKeepsTheLogConsistent(t *testing.T) {
	p := newFakeProvider(t, textReply("hello"))
	h := newHarness(t, p)
	h.sink.appendErr = func(e session.Event) error {
		if e.Type == session.TypeAssistantMessage {
			return errInjected
		}
		return nil
	}
	h.prompt("go")
	ev := h.events()
	if len(ofType(ev, session.TypeAssistantMessage)) != 0 {
		t.Fatal("an event the sink refused is in the log")
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndError || r.Error.Code != CodeSessionWrite {
		t.Errorf("turn/end = %+v", r)
	}
	h.checkLog()
}

func TestTurnThatCannotStartDropsTheQueueAndGoesIdle(t *testing.T) {
	p := newFakeProvider(t)
	h := newHarness(t, p)
	h.sink.appendErr = func(e session.Event) error {
		if e.Type == session.TypeTurnStart {
			return errInjected
		}
		return nil
	}
	h.agent.Followup(UserText("one", "p1"))
	h.agent.Followup(UserText("two", "p2"))
	h.idle()
	if n := len(h.events()); n != 0 {
		t.Errorf("%d events logged", n)
	}
	if s := h.agent.Status(); s != StatusIdle {
		t.Errorf("status = %s", s)
	}
}
