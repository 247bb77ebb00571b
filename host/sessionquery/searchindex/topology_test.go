package searchindex

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

func TestPersistenceTopology(t *testing.T) {
	f := newFixture(t)
	f.unmount()
	fake := newFakePersistence().put(hdr("durable", 1), "r1", texts("needle durable")).put(hdr("both", 2), "r1", texts("needle stored copy"))
	q := sessionquery.SessionSearchRequest{Query: "needle"}
	if got := sessionIDs(f.sessions(q)); len(got) != 0 {
		t.Fatalf("without persistence: %v", got)
	}
	unmount := f.svc.Mount(fake)
	p := f.sessions(q)
	if got := sessionIDs(p); !reflect.DeepEqual(sorted(got), []string{"both", "durable"}) {
		t.Fatalf("after mount: %v", got)
	}
	l := f.live(hdr("both", 2), texts("needle live copy"))
	p = f.sessions(q)
	for _, it := range p.Items {
		if it.Header.ID == "both" && (!it.Live || !it.Persisted || it.BestMatch.Snippet != "needle live copy") {
			t.Errorf("live shadowing: %+v", it)
		}
	}
	if got := seqs(f.events(sessionquery.EventSearchRequest{SessionID: "both", Query: "stored"})); len(got) != 0 {
		t.Errorf("a live id still shows its persisted documents: %v", got)
	}
	f.reg.Detach(l)
	p = f.sessions(q)
	for _, it := range p.Items {
		if it.Header.ID == "both" && (it.Live || !it.Persisted || it.BestMatch.Snippet != "needle stored copy") {
			t.Errorf("after detach: %+v", it)
		}
	}
	unmount()
	if got := sessionIDs(f.sessions(q)); len(got) != 0 {
		t.Errorf("after unmount: %v", got)
	}
	_, err := f.ix.SearchEvents(context.Background(), sessionquery.EventSearchRequest{SessionID: "durable", Query: "needle"})
	wantCode(t, err, sessionquery.CodeSessionNotFound)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestLiveSessionIsNeverInspectedAndIsInspectedOnceAfterDetaching(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("s", 1), "r1", texts("needle old"))
	l := f.live(hdr("s", 1), texts("needle old", "reply"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	// The live session is appended to and its persisted copy changes.
	if _, err := l.Append(session.TypeUserMessage, userMsg("needle newer")); err != nil {
		t.Fatal(err)
	}
	fake.put(hdr("s", 1), "r2", texts("needle old", "reply", "needle newer"))
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if len(p.Items) != 1 || !p.Items[0].Live || !p.Items[0].Persisted {
		t.Fatalf("live hit = %+v", p.Items)
	}
	if got := fake.Inspected(); len(got) != 0 {
		t.Fatalf("a live session was inspected: %v", got)
	}
	f.reg.Detach(l)
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if got := fake.Inspected(); !reflect.DeepEqual(got, []string{"s"}) {
		t.Errorf("inspections after detaching = %v, want [s]", got)
	}
}

func TestObservationRetriesWhenTheLiveSetChanges(t *testing.T) {
	t.Run("attached during the listing", func(t *testing.T) {
		f, fake := newFakeFixture(t)
		fake.put(hdr("p", 1), "r1", texts("needle"))
		fake.ListHook = func(_ context.Context, n int) {
			if n == 1 {
				f.live(hdr("late", 2), texts("needle late"))
			}
		}
		if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); !reflect.DeepEqual(sorted(got), []string{"late", "p"}) {
			t.Errorf("sessions = %v", got)
		}
		if n := fake.N("list"); n != 4 {
			t.Errorf("listings = %d, want 4 (two attempts)", n)
		}
	})
	t.Run("attached during an inspection", func(t *testing.T) {
		f, fake := newFakeFixture(t)
		fake.put(hdr("s", 1), "r1", texts("needle stored"))
		stored := slices.Clone(fake.Log("s"))
		fake.InspectHook = func(context.Context, string) {
			if _, ok := f.reg.Get("s"); !ok {
				f.live(hdr("s", 1), texts("needle stored", "needle live"))
			}
		}
		p := f.sessions(sessionquery.SessionSearchRequest{Query: "live"})
		if len(p.Items) != 1 || !p.Items[0].Live {
			t.Errorf("hits = %+v, want the live copy", p.Items)
		}
		if !reflect.DeepEqual(fake.Log("s"), stored) {
			t.Error("the stored events changed")
		}
	})
	t.Run("replaced by another owner", func(t *testing.T) {
		f, fake := newFakeFixture(t)
		first := f.live(hdr("s", 1), texts("needle first"))
		fake.ListHook = func(_ context.Context, n int) {
			if n == 1 {
				f.reg.Detach(first)
				f.live(hdr("s", 1), texts("needle second"))
			}
		}
		p := f.sessions(sessionquery.SessionSearchRequest{Query: "second"})
		if len(p.Items) != 1 {
			t.Errorf("hits = %+v, want the second owner", p.Items)
		}
	})
	t.Run("added during observation", func(t *testing.T) {
		f, fake := newFakeFixture(t)
		fake.put(hdr("a", 1), "r1", texts("needle a"))
		fake.ListHook = func(_ context.Context, n int) {
			if n == 2 {
				fake.put(hdr("b", 2), "r1", texts("needle b"))
			}
		}
		if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); !reflect.DeepEqual(sorted(got), []string{"a", "b"}) {
			t.Errorf("sessions = %v", got)
		}
		if got := fake.Inspected(); !reflect.DeepEqual(got, []string{"a", "a", "b"}) {
			t.Errorf("inspections = %v, want [a a b]", got)
		}
	})
}

func TestContinuousMutationFailsAfterFourListings(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.ListHook = func(_ context.Context, n int) {
		fake.put(hdr("churn", 1), string(rune('a'+n)), texts("needle"))
	}
	_, err := f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	qe := wantCode(t, err, sessionquery.CodePersistenceFailed)
	if qe.Message != msgNotStable || fake.N("list") != 4 {
		t.Errorf("%q after %d listings", qe.Message, fake.N("list"))
	}
}

func TestBindingChangesDuringObservation(t *testing.T) {
	t.Run("rejection from an unmounted binding is discarded", func(t *testing.T) {
		f, fake := newFakeFixture(t)
		fake.ListErr = errors.New("backend went away")
		fake.ListHook = func(context.Context, int) { f.unmount() }
		p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
		if len(p.Items) != 0 {
			t.Errorf("items = %+v", p.Items)
		}
	})
	t.Run("rejection from a replaced binding retries against the replacement", func(t *testing.T) {
		f, fake := newFakeFixture(t)
		fake.ListErr = errors.New("old backend failed")
		replacement := newFakePersistence().put(hdr("new", 1), "r1", texts("needle new"))
		fake.ListHook = func(context.Context, int) { f.unmount = f.svc.Mount(replacement) }
		if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); !reflect.DeepEqual(got, []string{"new"}) {
			t.Errorf("sessions = %v", got)
		}
	})
	t.Run("colliding revisions of a replacement are re-inspected", func(t *testing.T) {
		f, old := newFakeFixture(t)
		old.put(hdr("s", 1), "r1", texts("alpha"))
		f.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})
		replacement := newFakePersistence().put(hdr("s", 1), "r1", texts("bravo"))
		f.unmount = f.svc.Mount(replacement)
		if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "bravo"})); !reflect.DeepEqual(got, []string{"s"}) {
			t.Errorf("bravo: %v", got)
		}
		if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})); len(got) != 0 {
			t.Errorf("alpha still found: %v", got)
		}
		if n := len(old.Inspected()) + len(replacement.Inspected()); n != 2 {
			t.Errorf("inspections = %d, want 2", n)
		}
	})
	t.Run("unmounted during the second listing", func(t *testing.T) {
		f, fake := newFakeFixture(t)
		fake.put(hdr("s", 1), "r1", texts("needle"))
		fake.ListHook = func(_ context.Context, n int) {
			if n == 2 {
				f.unmount()
			}
		}
		p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
		if len(p.Items) != 0 || fake.N("list") != 2 {
			t.Errorf("items %+v after %d listings", p.Items, fake.N("list"))
		}
	})
	t.Run("binding changed during live observation", func(t *testing.T) {
		f, fake := newFakeFixture(t)
		fake.put(hdr("d", 1), "r1", texts("needle durable"))
		other := newFakePersistence().put(hdr("d", 1), "r1", texts("needle durable"))
		fake.InspectHook = func(context.Context, string) {
			if fake.N("inspect") == 1 {
				f.unmount = f.svc.Mount(other)
			}
		}
		if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); !reflect.DeepEqual(got, []string{"d"}) {
			t.Errorf("sessions = %v", got)
		}
		if n := len(fake.Inspected()) + len(other.Inspected()); n != 2 {
			t.Errorf("inspections = %d, want 2", n)
		}
	})
}

func TestUnmountAfterReconciliationKeepsThePageItWasBuiltFrom(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("d", 1), "r1", texts("needle"))
	if got := f.events(sessionquery.EventSearchRequest{SessionID: "d", Query: "needle"}); len(got.Items) != 1 {
		t.Fatalf("items = %+v", got.Items)
	}
	f.unmount()
	_, err := f.ix.SearchEvents(context.Background(), sessionquery.EventSearchRequest{SessionID: "d", Query: "needle"})
	wantCode(t, err, sessionquery.CodeSessionNotFound)
}

func TestMalformedListingsAndBackendErrors(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("a", 1), "r1", texts("needle"))
	fake.DupList = true
	_, err := f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	wantCode(t, err, sessionquery.CodePersistenceFailed)
	fake.DupList = false
	typed := sessionquery.Errorf(sessionquery.CodeCorruptSession, "typed")
	fake.ListErr = typed
	_, err = f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	if err != typed {
		t.Errorf("typed backend error = %v, want the identical error", err)
	}
	fake.ListErr = errors.New("disk on fire")
	_, err = f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	qe := wantCode(t, err, sessionquery.CodePersistenceFailed)
	if qe.Message != "session-search persistence observation failed: disk on fire" || !errors.Is(err, fake.ListErr) {
		t.Errorf("message = %q, cause kept: %v", qe.Message, errors.Is(err, fake.ListErr))
	}
	fake.ListErr = nil
	if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("after recovery: %v", got)
	}
}

func TestLivePersistedHeaderConflict(t *testing.T) {
	f, fake := newFakeFixture(t)
	stored := hdr("s", 1)
	stored.DelegationDepth = session.Ptr(1)
	fake.put(stored, "r1", texts("needle"))
	f.live(hdr("s", 1), texts("needle"))
	_, err := f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	wantCode(t, err, sessionquery.CodeSourceConflict)
}

func TestReopenReusesThePersistedBaseAndDropsTheOverlay(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("same", 1), "r1", texts("needle same")).put(hdr("changed", 2), "r1", texts("needle before")).put(hdr("deleted", 3), "r1", texts("needle deleted"))
	f.live(hdr("livesession", 4), texts("needle live"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	gen := func(id string) int {
		return f.count(`SELECT generation FROM persisted_sessions WHERE session_id = ?`, id)
	}
	sameGen, changedGen := gen("same"), gen("changed")
	if err := f.ix.Close(); err != nil {
		t.Fatal(err)
	}
	fake.put(hdr("changed", 2), "r2", texts("needle after"))
	fake.Remove("deleted")
	fake.put(hdr("added", 5), "r1", texts("needle added"))
	for _, l := range f.reg.List() {
		f.reg.Detach(l)
	}
	fake.Reset()
	f.ix = f.newIndex(f.cfg)
	got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})))
	if !reflect.DeepEqual(got, []string{"added", "changed", "same"}) {
		t.Errorf("after reopen: %v", got)
	}
	if ins := sorted(fake.Inspected()); !reflect.DeepEqual(ins, []string{"added", "changed"}) {
		t.Errorf("inspections = %v, want [added changed]", ins)
	}
	if gen("same") != sameGen || gen("changed") <= changedGen {
		t.Errorf("generations: same %d -> %d, changed %d -> %d", sameGen, gen("same"), changedGen, gen("changed"))
	}
	if f.count(`SELECT count(*) FROM persisted_sessions WHERE session_id = 'deleted'`) != 0 {
		t.Error("the deleted session's row survived")
	}
	if f.count(`SELECT count(*) FROM live_sessions`) != 0 {
		t.Error("the live overlay survived the reopen")
	}
}

func TestExternalRepairIsPickedUpOnce(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("s", 1), "r1", texts("needle before repair"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	fake.put(hdr("s", 1), "r2", texts("needle after repair"))
	fake.Reset()
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "after"})
	f.sessions(sessionquery.SessionSearchRequest{Query: "after"})
	if len(p.Items) != 1 || !reflect.DeepEqual(fake.Inspected(), []string{"s"}) {
		t.Errorf("items %+v, inspections %v", p.Items, fake.Inspected())
	}
}

func TestFailedReconciliationCommitsNothingAndTheNextSearchRecovers(t *testing.T) {
	t.Run("source failure", func(t *testing.T) {
		f, fake := newFakeFixture(t)
		fake.put(hdr("s", 1), "r1", texts("needle"))
		fake.InspectErr["s"] = errors.New("read failed")
		_, err := f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
		wantCode(t, err, sessionquery.CodePersistenceFailed)
		delete(fake.InspectErr, "s")
		if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); !reflect.DeepEqual(got, []string{"s"}) {
			t.Errorf("after recovery: %v", got)
		}
	})
	t.Run("read-only database", func(t *testing.T) {
		f := newFixture(t)
		f.persist(hdr("p", 1), texts("needle persisted"))
		seed := texts("needle seeded")
		l := f.live(hdr("l", 2), seed)
		if _, err := l.Append(session.TypeEndSeed, struct{}{}); err != nil {
			t.Fatal(err)
		}
		if err := f.ix.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		f.exec(`PRAGMA query_only = ON`)
		_, err := f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
		qe := wantCode(t, err, sessionquery.CodeIndexFailed)
		if qe.Message[:len("session-search reconciliation failed: ")] != "session-search reconciliation failed: " {
			t.Errorf("message = %q", qe.Message)
		}
		f.exec(`PRAGMA query_only = OFF`)
		if _, err := l.Append(session.TypeUserMessage, userMsg("needle after")); err != nil {
			t.Fatal(err)
		}
		p := f.events(sessionquery.EventSearchRequest{SessionID: "l", Query: "needle"})
		if got := sorted2(seqs(p)); !reflect.DeepEqual(got, []int{0, 2}) {
			t.Errorf("live seqs = %v, want [0 2]", got)
		}
		if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))); !reflect.DeepEqual(got, []string{"l", "p"}) {
			t.Errorf("sessions = %v", got)
		}
	})
}

func sorted2(s []int) []int {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestRealStoreAndSearchTogether(t *testing.T) {
	f := newFixture(t)
	h := hdr("stored", 7)
	h.AgentPreset = session.Ptr("coder")
	f.persist(h, texts("needle in a stored log", "a reply"))
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if len(p.Items) != 1 || !p.Items[0].Persisted || p.Items[0].Live {
		t.Fatalf("hits = %+v", p.Items)
	}
	stored, err := f.st.Stat(context.Background(), "stored")
	if err != nil {
		t.Fatal(err)
	}
	e := f.events(sessionquery.EventSearchRequest{SessionID: "stored", Query: "reply"})
	if !reflect.DeepEqual(e.Session, stored.Header) || !reflect.DeepEqual(seqs(e), []int{1}) {
		t.Errorf("event page = %+v", e)
	}
	_, err = f.ix.SearchEvents(context.Background(), sessionquery.EventSearchRequest{SessionID: "absent", Query: "reply"})
	wantCode(t, err, sessionquery.CodeSessionNotFound)
	if err := f.ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, events, err := f.st.Load(context.Background(), "stored"); err != nil || len(events) != 2 {
		t.Errorf("the log no longer loads: %d events, %v", len(events), err)
	}
}

func TestReopenAgainstTheSameOrAnotherStore(t *testing.T) {
	f, a := newFakeFixture(t)
	a.put(hdr("s", 1), "local-1", texts("alpha"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})
	f.ix.Close()
	a.Reset()
	f.ix = f.newIndex(f.cfg)
	f.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})
	if n := len(a.Inspected()); n != 0 {
		t.Errorf("reopening against the same store inspected %d logs", n)
	}

	// Two real stores holding the same id: their revisions are qualified
	// by their roots, so the second one's log is inspected and replaces
	// the first one's documents.
	g := newFixture(t)
	g.persist(hdr("s", 1), texts("alpha"))
	g.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})
	g.ix.Close()
	other := store.New(filepath.Join(g.dir, "other-sessions"), store.Options{})
	w, err := other.Create(hdr("s", 1), texts("bravo"))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	g.unmount()
	g.unmount = g.svc.Mount(sessionquery.NewStorePersistence(other))
	g.ix = g.newIndex(g.cfg)
	if got := sessionIDs(g.sessions(sessionquery.SessionSearchRequest{Query: "bravo"})); !reflect.DeepEqual(got, []string{"s"}) {
		t.Errorf("bravo: %v", got)
	}
	if got := sessionIDs(g.sessions(sessionquery.SessionSearchRequest{Query: "alpha"})); len(got) != 0 {
		t.Errorf("alpha: %v", got)
	}
}
