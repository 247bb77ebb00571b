package sessionquery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestReadTitleFoldsTheLatestPersistedTitle(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake().add(header("durable", 1), titleEvent(0, "Durable title"))
	fx.mount(t, p)
	title, err := fx.svc.ReadTitle(t.Context(), "durable")
	if err != nil {
		t.Fatal(err)
	}
	if title == nil || title.Title != "Durable title" || title.EventSeq != 0 || title.UpdatedAt != 1000 || string(title.Source) != `{"kind":"user"}` {
		t.Fatalf("title = %+v", title)
	}
	// A live title beats a stale durable one.
	l := newLive(t, header("durable", 1), []session.Event{titleEvent(0, "Durable title")})
	mustAppend(t, l, session.TypeSessionTitle, session.SessionTitle{Title: "Live title", MessageSeqs: []int{0}, Source: rawJSONMust(`{"kind":"fallback"}`)})
	if err := fx.live.Attach(l); err != nil {
		t.Fatal(err)
	}
	title, err = fx.svc.ReadTitle(t.Context(), "durable")
	if err != nil || title == nil || title.Title != "Live title" || title.EventSeq != 1 {
		t.Fatalf("title = %+v, %v; want the live title", title, err)
	}
	// No title at all.
	fx.attach(t, header("untitled", 2), "hello")
	if title, err := fx.svc.ReadTitle(t.Context(), "untitled"); err != nil || title != nil {
		t.Fatalf("untitled ReadTitle = %+v, %v", title, err)
	}
}

func TestListedRecordsHaveExactlyHeaderLiveAndPersisted(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, header("s", 1), "hi")
	records, err := fx.svc.ListSessions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := session.Marshal(records[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"header":{"version":0,"id":"s","createdAt":1},"live":true,"persisted":false}`; string(b) != want {
		t.Fatalf("record JSON = %s, want %s", b, want)
	}
}

func resultSummary(rs []TitleResult) []string {
	var out []string
	for _, r := range rs {
		switch {
		case r.Status == Fulfilled && r.Value != nil && r.Value.Title != nil:
			out = append(out, r.SessionID+":"+r.Value.Title.Title)
		case r.Status == Fulfilled:
			out = append(out, r.SessionID+":untitled")
		default:
			out = append(out, r.SessionID+":rejected")
		}
	}
	return out
}

func TestTitleBatchDedupesListsOnceAndKeepsInputOrder(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake().
		add(header("first", 1), titleEvent(0, "First")).
		add(header("second", 2), titleEvent(0, "Second"))
	fx.mount(t, p)
	ctx := t.Context()
	results, err := fx.svc.ReadTitleSnapshots(ctx, []string{"second", "first", "second", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultSummary(results); !slices.Equal(got, []string{"second:Second", "first:First", "missing:rejected"}) {
		t.Fatalf("results = %v", got)
	}
	wantError(t, results[2].Reason, CodeSessionNotFound, `session "missing" not found`)
	if n := len(p.CallsOf("list")); n != 1 {
		t.Fatalf("list calls = %d, want 1", n)
	}
	// Two workers start concurrently, so only the set is fixed here; the
	// single-worker batch below pins the order.
	if got := slices.Sorted(slices.Values(p.Inspected())); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("inspected %v, want first and second once each", got)
	}
	for _, c := range p.Calls() {
		if c.Ctx != ctx {
			t.Fatalf("%s %s did not receive the caller's ctx", c.Op, c.ID)
		}
	}
	if results[0].Value.Session.ID != "second" {
		t.Fatalf("observation header = %+v", results[0].Value.Session)
	}

	cfg := DefaultConfig()
	cfg.PersistedInspectConcurrency = 1
	serial := newFixture(t, cfg)
	q := newFake().
		add(header("first", 1), titleEvent(0, "First")).
		add(header("second", 2), titleEvent(0, "Second"))
	serial.mount(t, q)
	if _, err := serial.svc.ReadTitleSnapshots(ctx, []string{"second", "first", "second", "missing"}); err != nil {
		t.Fatal(err)
	}
	if got := q.Inspected(); !slices.Equal(got, []string{"second", "first"}) {
		t.Fatalf("inspected %v, want [second first]", got)
	}
}

// gatedInspections makes every inspection announce itself and wait for its
// own release.
type gatedInspections struct {
	mu      sync.Mutex
	started []string
	release map[string]chan struct{}
}

func newGate(ids []string) *gatedInspections {
	g := &gatedInspections{release: map[string]chan struct{}{}}
	for _, id := range ids {
		g.release[id] = make(chan struct{})
	}
	return g
}

func (g *gatedInspections) hook(ctx context.Context, id string) {
	g.mu.Lock()
	g.started = append(g.started, id)
	ch := g.release[id]
	g.mu.Unlock()
	<-ch
}

func (g *gatedInspections) startedIDs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.started)
}

func persistedIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("s%02d", i+1)
	}
	return out
}

func TestTitleBatchRunsAtMostTheConfiguredInspectionsAtOnce(t *testing.T) {
	for _, conc := range []int{4, 2, 1, 16} {
		t.Run(fmt.Sprint(conc), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.PersistedInspectConcurrency = conc
				fx := newFixture(t, cfg)
				all := persistedIDs(12)
				p := newFake()
				for i, id := range all {
					p.add(header(id, int64(i)), titleEvent(0, "T"+id))
				}
				g := newGate(all)
				p.InspectHook = g.hook
				fx.mount(t, p)
				done := make(chan []TitleResult, 1)
				go func() {
					rs, err := fx.svc.ReadTitleSnapshots(context.Background(), all)
					if err != nil {
						t.Error(err)
					}
					done <- rs
				}()
				want := min(conc, len(all))
				for released := 0; released < len(all); released++ {
					synctest.Wait()
					started := g.startedIDs()
					if inflight := len(started) - released; inflight != min(want, len(all)-released) {
						t.Fatalf("after %d releases %d inspections are in flight, want %d", released, inflight, min(want, len(all)-released))
					}
					close(g.release[started[released]])
				}
				rs := <-done
				// Workers claim ids in input order; the first wave starts
				// concurrently, and each later id is claimed alone.
				got := g.startedIDs()
				firstWave := slices.Sorted(slices.Values(got[:want]))
				if !slices.Equal(firstWave, all[:want]) || !slices.Equal(got[want:], all[want:]) {
					t.Fatalf("inspection order %v, want input order", got)
				}
				if p.PeakInflight() != want {
					t.Fatalf("peak concurrency %d, want %d", p.PeakInflight(), want)
				}
				for i, r := range rs {
					if r.SessionID != all[i] || r.Status != Fulfilled || r.Value.Title.Title != "T"+all[i] {
						t.Fatalf("result %d = %+v", i, r)
					}
				}
			})
		})
	}
}

func TestTitleBatchProjectsEachLogBeforeItsWorkerTakesTheNextID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newFixture(t, DefaultConfig())
		all := persistedIDs(5)
		p := newFake()
		for _, id := range all {
			p.add(header(id, 1), userLog("full log content of "+id)...)
		}
		// s01 returns at once; s02..s04 hold their workers, so only the
		// worker that finished s01 can take s05.
		g := newGate(all)
		close(g.release["s01"])
		close(g.release["s05"])
		fx.mount(t, p)

		var mu sync.Mutex
		var trace []string
		p.InspectHook = func(ctx context.Context, id string) {
			mu.Lock()
			trace = append(trace, "inspect:"+id)
			mu.Unlock()
			g.hook(ctx, id)
		}
		project := func(h session.Header, events []session.Event) (string, error) {
			mu.Lock()
			trace = append(trace, "project:"+h.ID)
			mu.Unlock()
			return h.ID + " has " + fmt.Sprint(len(events)) + " events", nil
		}
		done := make(chan []projection[string], 1)
		go func() {
			out, err := projectMany(context.Background(), fx.svc, all, project)
			if err != nil {
				t.Error(err)
			}
			done <- out
		}()
		synctest.Wait()
		for _, id := range all[1:4] {
			close(g.release[id])
		}
		out := <-done
		p1 := slices.Index(trace, "project:s01")
		i5 := slices.Index(trace, "inspect:s05")
		if p1 < 0 || i5 < 0 || p1 > i5 {
			t.Fatalf("trace %v: s01 was not projected before s05 was inspected", trace)
		}
		for _, o := range out {
			if strings.Contains(o.value, "full log content") {
				t.Fatalf("a projection kept log content: %q", o.value)
			}
		}
	})
}

func TestCancellingATitleBatchStopsDequeuingAndAwaitsStartedInspections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.PersistedInspectConcurrency = 2
		fx := newFixture(t, cfg)
		all := persistedIDs(8)
		p := newFake()
		for _, id := range all {
			p.add(header(id, 1), titleEvent(0, id))
		}
		g := newGate(all)
		p.InspectHook = g.hook
		fx.mount(t, p)
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := fx.svc.ReadTitleSnapshots(ctx, all)
			done <- err
		}()
		synctest.Wait()
		if got := g.startedIDs(); len(got) != 2 {
			t.Fatalf("started %v, want 2 inspections", got)
		}
		cancel(errReason)
		synctest.Wait()
		assertPending(t, done)
		close(g.release["s01"])
		synctest.Wait()
		assertPending(t, done)
		close(g.release["s02"])
		if err := <-done; err != errReason {
			t.Fatalf("error = %v, want exactly the cause", err)
		}
		if got := g.startedIDs(); len(got) != 2 {
			t.Fatalf("inspections after cancel: %v", got)
		}
		for _, c := range p.Calls() {
			if c.Ctx != ctx {
				t.Fatalf("%s did not get the caller's ctx", c.Op)
			}
		}
	})
}

func TestTitleBatchIsolatesFailuresPerID(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	boom := errors.New("disk on fire")
	malformed := ev(0, session.TypeSessionTitle, map[string]any{"title": "x", "source": map[string]string{"kind": "user"}})
	p := newFake().
		add(header("attaching", 1), titleEvent(0, "Durable")).
		add(header("failing", 2), titleEvent(0, "Never")).
		add(header("malformed", 3), malformed).
		add(header("fine", 4), titleEvent(0, "Fine"))
	p.InspectErr["failing"] = boom
	p.InspectHook = func(_ context.Context, id string) {
		if id != "attaching" {
			return
		}
		l := newLive(t, header("attaching", 1), []session.Event{titleEvent(0, "Durable")})
		mustAppend(t, l, session.TypeSessionTitle, session.SessionTitle{Title: "Live", MessageSeqs: []int{}, Source: rawJSONMust(`{"kind":"user"}`)})
		if err := fx.live.Attach(l); err != nil {
			t.Error(err)
		}
	}
	fx.mount(t, p)
	rs, err := fx.svc.ReadTitleSnapshots(t.Context(), []string{"attaching", "failing", "malformed", "fine"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultSummary(rs); !slices.Equal(got, []string{"attaching:Live", "failing:rejected", "malformed:rejected", "fine:Fine"}) {
		t.Fatalf("results = %v", got)
	}
	wantError(t, rs[1].Reason, CodePersistenceFailed, `failed to inspect session "failing": disk on fire`)
	if !errors.Is(rs[1].Reason, boom) {
		t.Fatal("the inspect failure lost its cause")
	}
	var te *session.TitleError
	if !errors.As(rs[2].Reason, &te) || te.Seq != 0 {
		t.Fatalf("malformed title reason = %v, want the title fold's own error", rs[2].Reason)
	}
}

func TestLiveOnlyTitleBatches(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, header("live", 1), "hi")
	rs, err := fx.svc.ReadTitleSnapshots(t.Context(), []string{"live", "live", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Status != Fulfilled || rs[1].Status != Rejected {
		t.Fatalf("results = %+v", rs)
	}
	b, err := session.Marshal(rs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"session":{"version":0,"id":"live","createdAt":1}}`; string(b) != want {
		t.Fatalf("observation JSON = %s, want %s (no title key)", b, want)
	}
	wantCode(t, rs[1].Reason, CodeSessionNotFound)
	_, err = fx.svc.ReadTitleSnapshot(t.Context(), "missing")
	wantError(t, err, CodeSessionNotFound, `session "missing" not found`)
}

func TestTitleBatchServesAnIDThatAttachesAfterTheListing(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake().add(header("durable", 1), titleEvent(0, "D"))
	p.ListHook = func(context.Context, int) {
		l := newLive(t, header("late", 2), nil)
		mustAppend(t, l, session.TypeSessionTitle, session.SessionTitle{Title: "Late", MessageSeqs: []int{}, Source: rawJSONMust(`{"kind":"user"}`)})
		if err := fx.live.Attach(l); err != nil {
			t.Error(err)
		}
	}
	fx.mount(t, p)
	rs, err := fx.svc.ReadTitleSnapshots(t.Context(), []string{"late", "durable"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultSummary(rs); !slices.Equal(got, []string{"late:Late", "durable:D"}) {
		t.Fatalf("results = %v", got)
	}
}

func TestTitleBatchKeepsLiveResultsWhenTheListingFails(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, header("live", 1), "hi")
	p := newFake()
	p.ListErr = errors.New("index unreadable")
	fx.mount(t, p)
	rs, err := fx.svc.ReadTitleSnapshots(t.Context(), []string{"missing", "live"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultSummary(rs); !slices.Equal(got, []string{"missing:rejected", "live:untitled"}) {
		t.Fatalf("results = %v", got)
	}
	wantError(t, rs[0].Reason, CodePersistenceFailed, "session persistence listing failed: index unreadable")
}

func TestTitleObservationsAreDetached(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	l := newLive(t, header("s", 1), nil)
	mustAppend(t, l, session.TypeSessionTitle, session.SessionTitle{Title: "T", MessageSeqs: []int{7}, Source: rawJSONMust(`{"kind":"user"}`)})
	l2 := newLive(t, session.Header{ID: "c", CreatedAt: 2, Cwd: ptr("/w")}, nil)
	if err := fx.live.Attach(l); err != nil {
		t.Fatal(err)
	}
	if err := fx.live.Attach(l2); err != nil {
		t.Fatal(err)
	}
	obs, err := fx.svc.ReadTitleSnapshot(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	obs.Title.MessageSeqs[0] = 99
	obs.Title.Source[2] = 'X'
	again, err := fx.svc.ReadTitleSnapshot(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if again.Title.MessageSeqs[0] != 7 || string(again.Title.Source) != `{"kind":"user"}` {
		t.Fatalf("mutating a title changed the next read: %+v", again.Title)
	}
	c, err := fx.svc.ReadTitleSnapshot(t.Context(), "c")
	if err != nil {
		t.Fatal(err)
	}
	*c.Session.Cwd = "/mutated"
	if h := l2.Header(); *h.Cwd != "/w" {
		t.Fatal("mutating an observation header changed the live session")
	}
}
