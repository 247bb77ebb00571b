package agent

import (
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// A log that refuses even the turn's start leaves nothing for a front end
// to read the outcome from; UnloggedEnd says what happened instead.
func TestUnloggedEndReportsATurnTheLogRefusedToStart(t *testing.T) {
	p := newFakeProvider(t, textReply("later"))
	h := newHarness(t, p)
	h.sink.appendErr = func(e session.Event) error { return errInjected }
	h.prompt("go")
	if n := len(h.events()); n != 0 {
		t.Fatalf("%d events in memory for a log that refused every write", n)
	}
	r, ok := h.agent.UnloggedEnd()
	if !ok || r.Kind != session.EndError || r.Error == nil || r.Error.Code != CodeSessionWrite ||
		!strings.Contains(r.Error.Message, errInjected.Error()) || !strings.Contains(r.Error.Message, "check free disk space") {
		t.Fatalf("UnloggedEnd = %+v, %v", r, ok)
	}
	if n := len(p.requests()); n != 0 {
		t.Fatalf("%d model requests for a turn that never started", n)
	}
	// Space is back: the next turn is logged and clears the report.
	h.sink.appendErr = nil
	h.prompt("again")
	if r, ok := h.agent.UnloggedEnd(); ok {
		t.Fatalf("UnloggedEnd after a logged turn = %+v", r)
	}
	if end := lastTurnEnd(t, h.events()); end.Kind != session.EndCompleted {
		t.Fatalf("turn/end = %+v", end)
	}
}

func TestUnloggedEndReportsACompletedTurnWhoseEndWasRefused(t *testing.T) {
	p := newFakeProvider(t, textReply("hello"))
	h := newHarness(t, p)
	h.sink.appendErr = func(e session.Event) error {
		if e.Type == session.TypeTurnEnd {
			return errInjected
		}
		return nil
	}
	h.prompt("go")
	if len(ofType(h.events(), session.TypeTurnEnd)) != 0 {
		t.Fatal("a refused turn/end is in memory")
	}
	r, ok := h.agent.UnloggedEnd()
	if !ok || r.Kind != session.EndError || r.Error.Code != CodeSessionWrite || !strings.Contains(r.Error.Message, errInjected.Error()) {
		t.Fatalf("UnloggedEnd = %+v, %v", r, ok)
	}
}

func TestUnloggedEndIsEmptyWhenEveryTurnIsLogged(t *testing.T) {
	h := newHarness(t, newFakeProvider(t, textReply("hello")))
	h.prompt("go")
	if r, ok := h.agent.UnloggedEnd(); ok {
		t.Fatalf("UnloggedEnd = %+v", r)
	}
}
