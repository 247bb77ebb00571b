package searchindex

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

type callerKey struct{}

func TestSearchPassesOneContextToEveryBackendCall(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("p", 1), "r1", texts("needle"))
	ctx := context.WithValue(context.Background(), callerKey{}, "caller")
	if _, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"}); err != nil {
		t.Fatal(err)
	}
	fake.put(hdr("p", 1), "r2", texts("needle again"))
	if _, err := f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "p", Query: "needle"}); err != nil {
		t.Fatal(err)
	}
	ctxs := fake.Contexts()
	if len(ctxs) != 6 {
		t.Fatalf("calls = %d, want 2 × (list, inspect, list)", len(ctxs))
	}
	for i, c := range ctxs {
		if c != ctx {
			t.Errorf("call %d got another context", i)
		}
	}
}

func TestPreAbortedSearchMakesNoBackendCall(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("p", 1), "r1", texts("needle"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
	qe := wantCode(t, err, sessionquery.CodeAborted)
	if qe.Message != "session-search aborted" {
		t.Errorf("message = %q", qe.Message)
	}
	_, err = f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "p", Query: "needle"})
	wantCode(t, err, sessionquery.CodeAborted)
	if n := len(fake.Contexts()); n != 0 {
		t.Errorf("%d backend calls", n)
	}
}

func TestCooperativeListAbortIsAwaited(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("p", 1), "r1", texts("needle"))
	ctx, cancel := context.WithCancel(context.Background())
	settled := false
	fake.ListHook = func(c context.Context, _ int) {
		cancel()
		<-c.Done()
		settled = true
	}
	fake.ListErr = context.Canceled
	_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
	wantCode(t, err, sessionquery.CodeAborted)
	if !settled || fake.N("inspect") != 0 {
		t.Errorf("settled %v, inspections %d", settled, fake.N("inspect"))
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cause = %v", err)
	}
}

func TestQueuedSearchWaitsForAnAbortIgnoringListing(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("p", 1), "r1", texts("needle"))
	if err := f.ix.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	fake.ListHook = func(_ context.Context, n int) {
		if n == 1 {
			close(entered)
			<-release
		}
	}
	queued := watchQueue(f.ix)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error)
	go func() {
		_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
		first <- err
	}()
	<-entered
	cancel()
	second := make(chan sessionquery.SessionSearchPage)
	go func() {
		p, err := f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
		if err != nil {
			t.Error(err)
		}
		second <- p
	}()
	waitQueued(t, queued, 1)
	select {
	case <-second:
		t.Fatal("the queued search ran while the aborted listing was still running")
	case err := <-first:
		t.Fatalf("the aborted search returned before its listing settled: %v", err)
	default:
	}
	close(release)
	wantCode(t, <-first, sessionquery.CodeAborted)
	if got := sessionIDs(<-second); !reflect.DeepEqual(got, []string{"p"}) {
		t.Errorf("second search = %v", got)
	}
}

func TestAbortIgnoringInspectionIsAwaitedAndNothingMoreStarts(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("a", 1), "r1", texts("needle")).put(hdr("b", 2), "r1", texts("needle"))
	ctx, cancel := context.WithCancel(context.Background())
	fake.InspectHook = func(context.Context, string) { cancel() }
	_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
	wantCode(t, err, sessionquery.CodeAborted)
	if fake.N("list") != 1 || fake.N("inspect") != 1 {
		t.Errorf("lists %d, inspections %d; want 1 and 1", fake.N("list"), fake.N("inspect"))
	}
	if n := f.count(`SELECT count(*) FROM persisted_sessions`); n != 0 {
		t.Errorf("an aborted observation committed %d sessions", n)
	}
	fake.InspectHook = nil
	if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("next search = %v", got)
	}
}

func TestQueuedSearchAbortsPromptlyAndKeepsTheOrder(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("p", 1), "r1", texts("needle"))
	if err := f.ix.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	queued := watchQueue(f.ix)
	if err := f.ix.queue.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	aborted := make(chan error)
	go func() {
		_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
		aborted <- err
	}()
	waitQueued(t, queued, 1)
	later := make(chan error)
	go func() {
		_, err := f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
		later <- err
	}()
	waitQueued(t, queued, 2)
	cancel()
	wantCode(t, <-aborted, sessionquery.CodeAborted)
	f.ix.queue.release()
	if err := <-later; err != nil {
		t.Errorf("the search queued behind the aborted one: %v", err)
	}
	if fake.N("list") != 2 {
		t.Errorf("listings = %d, want only the later search's two", fake.N("list"))
	}
}
