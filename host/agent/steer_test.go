package agent

import (
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestSteeringDuringTheFinalAnswerContinuesTheTurn(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	p := newFakeProvider(t, held(started, release, textReply("done")), textReply("also done"))
	h := newHarness(t, p)
	h.agent.Followup(UserText("first task", "p1"))
	<-started
	h.agent.Steer(UserText("and then this", "s1"))
	close(release)
	h.idle()
	ev := h.events()
	expectTypes(t, ev,
		"turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "step/end",
		"step/start", "user/message", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	steer := decode[session.Message](t, ofType(ev, session.TypeUserMessage)[1])
	if steer.ID != "s1" || session.JoinText(steer.Content) != "and then this" {
		t.Errorf("steered message = %+v", steer)
	}
	if r := lastTurnEnd(t, ev); r.Kind != session.EndCompleted {
		t.Errorf("turn/end = %+v", r)
	}
	// The second request saw the steering after the first answer.
	msgs := p.requests()[1].Messages
	if len(msgs) != 3 || session.JoinText(msgs[2].Content) != "and then this" {
		t.Errorf("second request messages = %+v", msgs)
	}
	h.checkLog()
}

func TestSteeringDuringAToolCallEntersAtTheNextStep(t *testing.T) {
	g := newGates()
	g.hold("read A")
	p := newFakeProvider(t, toolReply(call("c1", "read", `{"path":"A"}`)), textReply("ok"))
	h := newHarness(t, p, withTools(fileTools(t, g, &toolTrace{})))
	h.agent.Followup(UserText("read A", "p1"))
	g.expectStarted(t, "read A")
	h.agent.Steer(UserText("focus on errors", "s1"))
	g.release("read A")
	h.idle()
	expectTypes(t, h.events(),
		"turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "tool/call", "tool/result", "step/end",
		"step/start", "user/message", "assistant/chunk*", "assistant/message", "step/end", "turn/end")
	h.checkLog()
}

func TestSteerOnAnIdleAgentOpensATurn(t *testing.T) {
	p := newFakeProvider(t, textReply("hi"))
	h := newHarness(t, p)
	h.agent.Steer(UserText("hello", "s1"))
	h.idle()
	expectTypes(t, h.events(), "turn/start", "step/start", "user/message", "session/title", "request/header", "request/context",
		"assistant/chunk*", "assistant/message", "step/end", "turn/end")
}

func TestQueuedFollowupsRunAsSeparateTurns(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	p := newFakeProvider(t, held(started, release, textReply("one")), textReply("two"))
	h := newHarness(t, p)
	statuses := make(chan Status, 8)
	h.agent.OnStatus(func(s Status) { statuses <- s })
	h.agent.Followup(UserText("first", "p1"))
	if s := h.agent.Status(); s != StatusRunning {
		t.Errorf("status right after Followup = %s", s)
	}
	<-started
	h.agent.Followup(UserText("second", "p2"))
	close(release)
	h.idle()
	ev := h.events()
	if n := len(ofType(ev, session.TypeTurnStart)); n != 2 {
		t.Fatalf("%d turns", n)
	}
	// Notifications are delivered by the goroutine that changed the
	// status, so the idle one may arrive just after WhenIdle returns.
	for _, want := range []Status{StatusRunning, StatusIdle} {
		select {
		case got := <-statuses:
			if got != want {
				t.Errorf("status notification %s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s notification", want)
		}
	}
	if s := h.agent.Status(); s != StatusIdle {
		t.Errorf("final status %s", s)
	}
	h.checkLog()
}
