package agent

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// callOrder lists "call <id>" and "result <id>" for the tool events of a log.
func callOrder(t *testing.T, events []session.Event) []string {
	t.Helper()
	var out []string
	for _, e := range events {
		switch e.Type {
		case session.TypeToolCall:
			out = append(out, "call "+decode[session.ToolCall](t, e).CallID)
		case session.TypeToolResult:
			r := decode[session.ToolResult](t, e)
			out = append(out, "result "+r.Message.Content[0].ToolCallID)
		}
	}
	return out
}

func TestTwoParallelReadsOverlapAndCommitInModelOrder(t *testing.T) {
	g, tr := newGates(), &toolTrace{}
	g.hold("read A")
	g.hold("read B")
	p := newFakeProvider(t, toolReply(call("a", "read", `{"path":"A"}`), call("b", "read", `{"path":"B"}`)), textReply("done"))
	h := newHarness(t, p, withTools(fileTools(t, g, tr)))
	h.agent.Followup(UserText("read both", "p1"))

	// Both bodies run at once; B finishes first, yet A's result is logged
	// first.
	g.expectStarted(t, "read A", "read B")
	g.release("read B")
	g.release("read A")
	h.idle()

	ev := h.events()
	if got, want := callOrder(t, ev), []string{"call a", "call b", "result a", "result b"}; !slices.Equal(got, want) {
		t.Errorf("tool events = %v, want %v", got, want)
	}
	ops := tr.list()
	if slices.Index(ops, "start read B") > slices.Index(ops, "end read A") {
		t.Errorf("reads did not overlap: %v", ops)
	}
	h.checkLog()
}

func TestReadThenWriteFormsBarriers(t *testing.T) {
	g, tr := newGates(), &toolTrace{}
	g.hold("read A")
	g.hold("read B")
	p := newFakeProvider(t, toolReply(
		call("r1", "read", `{"path":"A"}`),
		call("r2", "read", `{"path":"B"}`),
		call("w1", "write", `{"path":"A"}`),
		call("r3", "read", `{"path":"C"}`),
	), textReply("done"))
	h := newHarness(t, p, withTools(fileTools(t, g, tr)))
	h.agent.Followup(UserText("edit", "p1"))
	g.expectStarted(t, "read A", "read B")
	g.release("read A")
	g.release("read B")
	h.idle()

	// {A,B}, then {write A}, then {C}: the write waits for both reads and the
	// last read waits for the write.
	want := []string{"start read A", "start read B", "end read A", "end read B", "start write A", "end write A", "start read C", "end read C"}
	ops := tr.list()
	if !slices.Equal(ops[:2], []string{"start read A", "start read B"}) && !slices.Equal(ops[:2], []string{"start read B", "start read A"}) {
		t.Errorf("first group = %v", ops[:2])
	}
	if !slices.Equal(ops[4:], want[4:]) || !slices.Contains(ops[2:4], "end read A") || !slices.Contains(ops[2:4], "end read B") {
		t.Errorf("tool bodies ran as %v, want groups %v", ops, want)
	}
	if got, want := callOrder(t, h.events()), []string{
		"call r1", "call r2", "result r1", "result r2", "call w1", "result w1", "call r3", "result r3",
	}; !slices.Equal(got, want) {
		t.Errorf("tool events = %v, want %v", got, want)
	}
	h.checkLog()
}

func TestParallelPoolIsBoundedByMaxParallelToolCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, tr := newGates(), &toolTrace{}
		for _, k := range []string{"read A", "read B", "read C"} {
			g.hold(k)
		}
		p := newFakeProvider(t, toolReply(
			call("a", "read", `{"path":"A"}`), call("b", "read", `{"path":"B"}`), call("c", "read", `{"path":"C"}`),
		), textReply("done"))
		h := newHarness(t, p, withTools(fileTools(t, g, tr)), withOptions(func(o *Options) { o.MaxParallelToolCalls = 2 }))
		h.agent.Followup(UserText("read", "p1"))
		synctest.Wait()
		if ops := sorted(tr.list()); !slices.Equal(ops, []string{"start read A", "start read B"}) {
			t.Fatalf("with a pool of 2, running bodies are %v", ops)
		}
		// C starts as soon as a slot frees up, while A still runs.
		g.release("read B")
		synctest.Wait()
		if ops := tr.list(); len(ops) != 4 || !slices.Equal(ops[2:], []string{"end read B", "start read C"}) {
			t.Fatalf("after B ended: %v", ops)
		}
		g.release("read C")
		g.release("read A")
		h.idle()
		if got, want := callOrder(t, h.events()), []string{"call a", "call b", "call c", "result a", "result b", "result c"}; !slices.Equal(got, want) {
			t.Errorf("tool events = %v, want %v", got, want)
		}
	})
}

func TestAdditionalContextsEnterTheNextStepInCallOrder(t *testing.T) {
	reg := tools.NewRegistry(nil)
	for _, name := range []string{"first", "second"} {
		name := name
		_, err := reg.Register(&tools.Definition{
			Name: name, Description: name, Output: tools.StringOutput,
			ConcurrencySafe: func(*tools.Call) bool { return true },
			Execute: func(ctx context.Context, c *tools.Call) (any, error) {
				tools.DeferContext(ctx, UserText("context from "+name, "ctx-"+name))
				return "ok", nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	p := newFakeProvider(t, toolReply(call("c1", "first", ``), call("c2", "second", ``)), textReply("done"))
	h := newHarness(t, p, withTools(reg))
	h.prompt("go")
	ev := h.events()
	expectTypes(t, ev,
		"turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "tool/call", "tool/call", "tool/result", "tool/result", "step/end",
		"step/start", "user/message", "user/message", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	msgs := ofType(ev, session.TypeUserMessage)
	if a, b := session.JoinText(decode[session.Message](t, msgs[1]).Content), session.JoinText(decode[session.Message](t, msgs[2]).Content); a != "context from first" || b != "context from second" {
		t.Errorf("contexts entered as %q, %q", a, b)
	}
	h.checkLog()
}

func TestConcludedResultCompletesTheTurnWithoutAnotherStep(t *testing.T) {
	reg := tools.NewRegistry(nil)
	if _, err := reg.Register(&tools.Definition{
		Name: "finish", Description: "finish", Output: tools.StringOutput,
		Execute: func(ctx context.Context, c *tools.Call) (any, error) {
			tools.ConcludeTurn(ctx)
			return "finished", nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	p := newFakeProvider(t, toolReply(call("c1", "finish", `{}`)))
	h := newHarness(t, p, withTools(reg))
	h.prompt("go")
	expectTypes(t, h.events(), "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "tool/call", "tool/result", "step/end", "turn/end")
	if r := lastTurnEnd(t, h.events()); r.Kind != session.EndCompleted {
		t.Errorf("turn/end = %+v", r)
	}
}
