package sessionquery

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestReadSessionReturnsADetachedValidatedLog(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	stored := userLog("one", "two")
	p := newFake().add(session.Header{ID: "s", CreatedAt: 1, Cwd: ptr("/w")}, stored...)
	fx.mount(t, p)
	snap, err := fx.svc.ReadSession(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Events) != 2 || snap.Session.ID != "s" {
		t.Fatalf("snapshot = %+v", snap)
	}
	*snap.Session.Cwd = "/mutated"
	snap.Events[0].Data[2] = 'X'
	snap.Events[1].Type = "mutated"
	again, err := fx.svc.ReadSession(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if *again.Session.Cwd != "/w" || string(again.Events[0].Data) != string(stored[0].Data) || again.Events[1].Type != session.TypeUserMessage {
		t.Fatal("mutating a read log changed the stored log")
	}
	if _, live := fx.live.Get("s"); live {
		t.Fatal("ReadSession made the session live")
	}
}

func TestReadSessionRejectsAStoredLogWithASeqGap(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	gap := ev(1, session.TypeUserMessage, userText("late"))
	fx.mount(t, newFake().add(header("s", 1), gap))
	_, err := fx.svc.ReadSession(t.Context(), "s")
	if err == nil || !strings.Contains(err.Error(), "seed event at index 0 has seq 1") {
		t.Fatalf("error = %v", err)
	}
	var qe *Error
	if errors.As(err, &qe) {
		t.Fatalf("the validator's error was retyped as %s", qe.Code)
	}
}

func TestListEventsClassifiesEveryEvent(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	l := newLive(t, header("s", 1), nil)
	mustAppend(t, l, session.TypeTurnStart, session.TurnStart{})
	mustAppend(t, l, session.TypeStepStart, session.StepBoundary{})
	mustAppend(t, l, session.TypeUserMessage, userText("question"))
	mustAppend(t, l, session.TypeAssistantChunk, session.AssistantChunk{Chunk: json.RawMessage(`{}`)})
	mustAppend(t, l, session.TypeAssistantMessage, assistantText("answer"), session.WithSurface(session.OpReplace(2, 2)), session.WithSources(2, 3))
	if err := fx.live.Attach(l); err != nil {
		t.Fatal(err)
	}
	records, err := fx.svc.ListEvents(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	var surfaces []string
	for i, r := range records {
		if r.Seq != i || r.SessionID != "s" || r.Time != 1000+int64(i) {
			t.Fatalf("record %d = %+v", i, r)
		}
		surfaces = append(surfaces, r.Surface)
	}
	want := []string{SurfaceLogOnly, SurfaceLogOnly, SurfaceShadowed, SurfaceLogOnly, SurfaceCurrent}
	if !slices.Equal(surfaces, want) {
		t.Fatalf("surfaces = %v, want %v", surfaces, want)
	}
}

// twoReplacements ends with surface [4 user/message, 5 assistant/message]:
// a user message replaced by a summary, and an answer replaced in turn.
func twoReplacements(t *testing.T) *session.Live {
	l := newLive(t, header("s", 1), nil)
	mustAppend(t, l, session.TypeUserMessage, userText("q"))                                                                                        // 0
	mustAppend(t, l, session.TypeAssistantMessage, assistantText("a"))                                                                              // 1
	mustAppend(t, l, session.TypeUserMessage, userText("q2"))                                                                                       // 2
	mustAppend(t, l, session.TypeAssistantMessage, assistantText("a2"))                                                                             // 3
	mustAppend(t, l, session.TypeUserMessage, userText("summary"), session.WithSurface(session.OpReplace(0, 2)), session.WithSources(0, 1, 2))      // 4
	mustAppend(t, l, session.TypeAssistantMessage, assistantText("a2 again"), session.WithSurface(session.OpReplace(3, 3)), session.WithSources(3)) // 5
	return l
}

func TestReadSurfaceReturnsTheCurrentSurfaceDetached(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	l := twoReplacements(t)
	if err := fx.live.Attach(l); err != nil {
		t.Fatal(err)
	}
	snap, err := fx.svc.ReadSurface(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if snap.CapturedThroughSeq == nil || *snap.CapturedThroughSeq != 5 {
		t.Fatalf("capturedThroughSeq = %v, want 5", snap.CapturedThroughSeq)
	}
	if len(snap.Events) != 2 || snap.Events[0].Seq != 4 || snap.Events[0].Type != session.TypeUserMessage ||
		snap.Events[1].Seq != 5 || snap.Events[1].Type != session.TypeAssistantMessage {
		t.Fatalf("surface = %+v", snap.Events)
	}
	snap.Events[0].Data[2] = 'X'
	snap.Events[0].SurfaceOp[2] = 'X'
	snap.Session.ID = "mutated"
	_, events := l.Snapshot()
	if events[4].Data[2] == 'X' || events[4].SurfaceOp[2] == 'X' || l.Header().ID != "s" {
		t.Fatal("mutating the surface changed the live log")
	}
}

func TestReadSurfaceOfAnEmptyLog(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, header("empty", 1))
	snap, err := fx.svc.ReadSurface(t.Context(), "empty")
	if err != nil {
		t.Fatal(err)
	}
	b, err := session.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"session":{"version":0,"id":"empty","createdAt":1},"capturedThroughSeq":null,"events":[]}`; string(b) != want {
		t.Fatalf("snapshot JSON = %s, want %s", b, want)
	}
}

func TestReadEventWindows(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ReadWindowMax = 1
	fx := newFixture(t, cfg)
	l := fx.attach(t, header("s", 1), "e0", "e1", "e2", "e3", "e4")
	w, err := fx.svc.ReadEvent(t.Context(), "s", 2, ptr(1), ptr(1))
	if err != nil {
		t.Fatal(err)
	}
	if w.StartSeq != 1 || w.EndSeq != 3 || w.Target.Seq != 2 || len(w.Events) != 3 || w.Events[0].Seq != 1 || w.Events[2].Seq != 3 {
		t.Fatalf("window = start %d end %d target %d events %d", w.StartSeq, w.EndSeq, w.Target.Seq, len(w.Events))
	}
	w.Target.Data[2] = 'X'
	w.Events[1].Data[2] = 'Y'
	_, events := l.Snapshot()
	if events[2].Data[2] == 'X' || events[2].Data[2] == 'Y' {
		t.Fatal("mutating the window changed the live log")
	}
	edges := []struct {
		seq, before, after int
		start, end         int
	}{{0, 1, 0, 0, 0}, {4, 0, 1, 4, 4}, {0, 1, 1, 0, 1}, {4, 1, 1, 3, 4}}
	for _, e := range edges {
		w, err := fx.svc.ReadEvent(t.Context(), "s", e.seq, &e.before, &e.after)
		if err != nil || w.StartSeq != e.start || w.EndSeq != e.end || len(w.Events) != e.end-e.start+1 {
			t.Fatalf("ReadEvent(%d, %d, %d) = [%d, %d], %v; want [%d, %d]", e.seq, e.before, e.after, w.StartSeq, w.EndSeq, err, e.start, e.end)
		}
	}
	if w, err := fx.svc.ReadEvent(t.Context(), "s", 3, nil, nil); err != nil || w.StartSeq != 3 || w.EndSeq != 3 {
		t.Fatalf("default window = %+v, %v", w, err)
	}
	_, err = fx.svc.ReadEvent(t.Context(), "s", 9, nil, nil)
	wantError(t, err, CodeEventNotFound, `session "s" has no event at seq 9`)
	_, err = fx.svc.ReadEvent(t.Context(), "s", -1, nil, nil)
	wantError(t, err, CodeEventNotFound, `session "s" has no event at seq -1`)
	for _, bad := range []struct {
		before, after *int
		message       string
	}{
		{ptr(-1), nil, "before must be an integer between 0 and 1"},
		{ptr(2), nil, "before must be an integer between 0 and 1"},
		{nil, ptr(-1), "after must be an integer between 0 and 1"},
		{ptr(0), ptr(2), "after must be an integer between 0 and 1"},
	} {
		_, err := fx.svc.ReadEvent(t.Context(), "s", 2, bad.before, bad.after)
		wantError(t, err, CodeInvalidWindow, bad.message)
	}
}

func TestReadEventValidatesTheWindowBeforeReadingAndSkipsSurfaceChecks(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake()
	broken := []session.Event{
		ev(0, session.TypeUserMessage, userText("x")),
		ev(1, session.TypeAssistantMessage, assistantText("y"), session.WithSurface(session.OpReplace(7, 8)), session.WithSources(0)),
	}
	p.add(header("broken", 1), broken...)
	fx.mount(t, p)
	_, err := fx.svc.ReadEvent(t.Context(), "absent", 0, ptr(51), nil)
	wantCode(t, err, CodeInvalidWindow)
	if len(p.Calls()) != 0 {
		t.Fatal("an invalid window reached the backend")
	}
	w, err := fx.svc.ReadEvent(t.Context(), "broken", 1, ptr(1), nil)
	if err != nil || len(w.Events) != 2 {
		t.Fatalf("ReadEvent on a broken surface = %+v, %v", w, err)
	}
	if _, err := fx.svc.ListEvents(t.Context(), "broken"); err == nil {
		t.Fatal("ListEvents accepted the broken surface")
	}
}
