package session

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeSink records appended events and barrier calls in order.
type fakeSink struct {
	mu        sync.Mutex
	appended  []Event
	calls     []string
	appendErr error
	flushErr  error
	closed    int
}

func (s *fakeSink) Append(events ...Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.appendErr != nil {
		return s.appendErr
	}
	s.appended = append(s.appended, events...)
	for range events {
		s.calls = append(s.calls, "append")
	}
	return nil
}

func (s *fakeSink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "flush")
	return s.flushErr
}

func (s *fakeSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "close")
	s.closed++
	return nil
}

func fixedClock(ms int64) func() time.Time { return func() time.Time { return time.UnixMilli(ms) } }

func TestLiveAppendAssignsSeqTimeAndDefaultSurfaceOp(t *testing.T) {
	sink := &fakeSink{}
	l := NewLive(validHeader(), []Event{userEv(0, "seed")}, LiveOptions{Sink: sink, Now: fixedClock(1234)})
	e, err := l.Append(TypeUserMessage, userMsg(1, "hi"), WithSources(0))
	if err != nil {
		t.Fatal(err)
	}
	if e.Seq != 1 || e.Time != 1234 || string(e.SurfaceOp) != `"append"` || string(e.SourceEventSeqs) != `[0]` {
		t.Fatalf("appended = %+v", e)
	}
	r, err := l.Append(TypeAssistantMessage, AssistantMessage{Turn: 1, Step: 1, Message: assistantMsg(2, TextBlock("x"))}, WithSurface(OpReplace(1, 1)), WithSources(1))
	if err != nil {
		t.Fatal(err)
	}
	if string(r.SurfaceOp) != `{"op":"replace","start":1,"end":1}` {
		t.Fatalf("surfaceOp = %s", r.SurfaceOp)
	}
	ts, _ := l.Append(TypeTurnStart, TurnStart{Turn: 1})
	if ts.SurfaceOp != nil || ts.SourceEventSeqs != nil {
		t.Fatalf("non-surface event got surface metadata: %+v", ts)
	}
	// The seed is not re-sent to the sink; live appends are.
	if len(sink.appended) != 3 || sink.appended[0].Seq != 1 {
		t.Fatalf("sink saw %d events starting at %d", len(sink.appended), sink.appended[0].Seq)
	}
	_, events := l.Snapshot()
	if _, err := ValidateEvents(events); err != nil {
		t.Fatalf("live log invalid: %v", err)
	}
	if got := l.Events(2); len(got) != 2 || got[0].Seq != 2 {
		t.Fatalf("Events(2) = %+v", got)
	}
	if l.Events(10) != nil || len(l.Events(-3)) != 4 {
		t.Fatal("Events bounds")
	}
}

func TestLiveSinkFailureLeavesTheLogUnchanged(t *testing.T) {
	sink := &fakeSink{appendErr: errors.New("disk full")}
	l := NewLive(validHeader(), nil, LiveOptions{Sink: sink})
	seen := 0
	l.Subscribe(func(Event) { seen++ })
	if _, err := l.Append(TypeTurnStart, TurnStart{Turn: 1}); err == nil || !errors.Is(err, sink.appendErr) {
		t.Fatalf("Append = %v, want the sink error", err)
	}
	if l.Len() != 0 || seen != 0 {
		t.Fatalf("failed append left %d events and %d notifications", l.Len(), seen)
	}
}

func TestLiveObserversSeeEventsInSeqOrderAndCanUnsubscribe(t *testing.T) {
	l := NewLive(validHeader(), nil, LiveOptions{})
	var got []int
	unsubscribe := l.Subscribe(func(e Event) { got = append(got, e.Seq) })
	for range 3 {
		if _, err := l.Append(TypeStepStart, StepBoundary{}); err != nil {
			t.Fatal(err)
		}
	}
	unsubscribe()
	_, _ = l.Append(TypeStepEnd, StepBoundary{})
	if !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("observed %v, want [0 1 2]", got)
	}
}

func TestLiveRevisionChangesOnAppendAndDiffersBetweenInstances(t *testing.T) {
	a := NewLive(validHeader(), nil, LiveOptions{})
	b := NewLive(validHeader(), nil, LiveOptions{})
	r0 := a.Revision()
	if r0 == b.Revision() {
		t.Fatal("two live instances share a revision")
	}
	_, _ = a.Append(TypeTurnStart, TurnStart{Turn: 1})
	if a.Revision() == r0 {
		t.Fatal("revision did not change on append")
	}
}

func TestLiveCloseFlushesOnceAndRefusesLaterAppends(t *testing.T) {
	sink := &fakeSink{}
	l := NewLive(validHeader(), nil, LiveOptions{Sink: sink})
	_, _ = l.Append(TypeTurnStart, TurnStart{Turn: 1})
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil || sink.closed != 1 {
		t.Fatalf("second Close = %v, sink closed %d times", err, sink.closed)
	}
	if !slices.Equal(sink.calls, []string{"append", "flush", "flush", "close"}) {
		t.Fatalf("sink calls = %v", sink.calls)
	}
	if _, err := l.Append(TypeTurnEnd, TurnEnd{}); err == nil {
		t.Fatal("append after close succeeded")
	}
}

func TestLiveHeaderAndSnapshotAreCopies(t *testing.T) {
	l := NewLive(validHeader(), nil, LiveOptions{})
	h := l.Header()
	*h.Cwd = "/elsewhere"
	if l.Header().CwdOrEmpty() != "/work/proj" || l.ID() != "s1" {
		t.Fatal("Header leaked the live header")
	}
	if err := (&Live{}).Flush(); err != nil {
		t.Fatalf("Flush without a sink = %v", err)
	}
}

func TestRegistryAttachDetachAndNotifications(t *testing.T) {
	r := NewRegistry()
	var changes []string
	r.Subscribe(func(c RegistryChange) {
		verb := "detach"
		if c.Attached {
			verb = "attach"
		}
		changes = append(changes, verb+":"+c.Live.ID())
	})
	h2 := validHeader()
	h2.ID = "s2"
	a, b := NewLive(validHeader(), nil, LiveOptions{}), NewLive(h2, nil, LiveOptions{})
	if err := r.Attach(a); err != nil {
		t.Fatal(err)
	}
	if err := r.Attach(b); err != nil {
		t.Fatal(err)
	}
	if err := r.Attach(NewLive(validHeader(), nil, LiveOptions{})); err == nil {
		t.Fatal("attached a duplicate id")
	}
	if got, ok := r.Get("s1"); !ok || got != a {
		t.Fatal("Get(s1) did not return the attached instance")
	}
	stale := NewLive(validHeader(), nil, LiveOptions{})
	r.Detach(stale) // not the registered instance: no effect
	if _, ok := r.Get("s1"); !ok {
		t.Fatal("detaching a stale instance removed the live one")
	}
	r.Detach(a)
	ids := []string{}
	for _, l := range r.List() {
		ids = append(ids, l.ID())
	}
	if !slices.Equal(ids, []string{"s2"}) {
		t.Fatalf("List = %v", ids)
	}
	if !slices.Equal(changes, []string{"attach:s1", "attach:s2", "detach:s1"}) {
		t.Fatalf("changes = %v", changes)
	}
}
