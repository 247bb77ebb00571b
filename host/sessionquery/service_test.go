package sessionquery

import (
	"context"
	"errors"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestNewRejectsInvalidConfig(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		message string
	}{
		{"negative read window", Config{ReadWindowMax: -1, PersistedInspectConcurrency: 4}, "session-query: readWindowMax must be a non-negative integer"},
		{"zero concurrency", Config{ReadWindowMax: 50, PersistedInspectConcurrency: 0}, "session-query: persistedInspectConcurrency must be a positive safe integer"},
		{"unsafe concurrency", Config{ReadWindowMax: 50, PersistedInspectConcurrency: 1 << 53}, "session-query: persistedInspectConcurrency must be a positive safe integer"},
		{"zero value", Config{}, "session-query: persistedInspectConcurrency must be a positive safe integer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := New(tc.cfg, session.NewRegistry())
			if svc != nil {
				t.Fatal("an invalid config produced a service")
			}
			wantError(t, err, CodeInvalidConfig, tc.message)
		})
	}
	if _, err := New(DefaultConfig(), nil); err == nil {
		t.Fatal("New accepted a nil registry")
	}
	for _, ok := range []Config{DefaultConfig(), {ReadWindowMax: 0, PersistedInspectConcurrency: 1}, {ReadWindowMax: 1, PersistedInspectConcurrency: 1<<53 - 1}} {
		if _, err := New(ok, session.NewRegistry()); err != nil {
			t.Fatalf("New(%+v): %v", ok, err)
		}
	}
}

func TestBindingIdentityChangesOnEveryMountAndUnmount(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	seen := map[uint64]bool{}
	note := func(b Binding) {
		t.Helper()
		if seen[b.ID] {
			t.Fatalf("binding id %d reused", b.ID)
		}
		seen[b.ID] = true
	}
	b0 := fx.svc.Binding()
	if b0.Persistence != nil {
		t.Fatal("a new service has persistence mounted")
	}
	note(b0)
	p1, p2 := newFake(), newFake()
	unmount1 := fx.svc.Mount(p1)
	if b := fx.svc.Binding(); b.Persistence != p1 {
		t.Fatal("mount did not bind p1")
	} else {
		note(b)
	}
	unmount2 := fx.svc.Mount(p2)
	if b := fx.svc.Binding(); b.Persistence != p2 {
		t.Fatal("replacement did not bind p2")
	} else {
		note(b)
	}
	unmount1() // stale: p2 stays
	if b := fx.svc.Binding(); b.Persistence != p2 || !seen[b.ID] {
		t.Fatalf("a stale unmount changed the binding: %+v", b)
	}
	unmount2()
	b := fx.svc.Binding()
	if b.Persistence != nil {
		t.Fatal("unmount left persistence bound")
	}
	note(b)
	unmount2() // idempotent
	if fx.svc.Binding() != b {
		t.Fatal("a second unmount changed the binding")
	}
}

type fakeEngine struct {
	closed   int
	sessions []SessionSearchRequest
	events   []EventSearchRequest
	ctxs     []context.Context
}

func (e *fakeEngine) SearchSessions(ctx context.Context, req SessionSearchRequest) (SessionSearchPage, error) {
	e.sessions = append(e.sessions, req)
	e.ctxs = append(e.ctxs, ctx)
	return SessionSearchPage{Items: []SessionHit{{BestMatch: EventHit{Snippet: "hit"}}}}, nil
}

func (e *fakeEngine) SearchEvents(ctx context.Context, req EventSearchRequest) (EventSearchPage, error) {
	e.events = append(e.events, req)
	e.ctxs = append(e.ctxs, ctx)
	return EventSearchPage{Items: []EventHit{}, Session: session.Header{ID: req.SessionID}}, nil
}

func (e *fakeEngine) Close() error { e.closed++; return nil }

func TestSearchIsDisabledWithoutAnEngine(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	const msg = `session search is disabled: this deployment configures the session-query index with openAt "never"`
	_, err := fx.svc.SearchSessions(t.Context(), SessionSearchRequest{Query: "x"})
	wantError(t, err, CodeSearchDisabled, msg)
	_, err = fx.svc.SearchEvents(t.Context(), EventSearchRequest{SessionID: "s", Query: "x"})
	wantError(t, err, CodeSearchDisabled, msg)
	// Exact reads still work.
	fx.attach(t, header("s", 1), "hello")
	if _, err := fx.svc.ListSessions(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.svc.TraceSession(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
}

func TestSearchDelegatesToTheEngineAndCloseClosesItOnce(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	e := &fakeEngine{}
	fx.svc.SetEngine(e)
	ctx := t.Context()
	page, err := fx.svc.SearchSessions(ctx, SessionSearchRequest{Query: "alpha"})
	if err != nil || len(page.Items) != 1 || page.Items[0].BestMatch.Snippet != "hit" {
		t.Fatalf("SearchSessions = %+v, %v", page, err)
	}
	epage, err := fx.svc.SearchEvents(ctx, EventSearchRequest{SessionID: "s", Query: "beta"})
	if err != nil || epage.Session.ID != "s" {
		t.Fatalf("SearchEvents = %+v, %v", epage, err)
	}
	if len(e.sessions) != 1 || e.sessions[0].Query != "alpha" || len(e.events) != 1 || e.events[0].Query != "beta" {
		t.Fatalf("engine saw %+v %+v", e.sessions, e.events)
	}
	for _, c := range e.ctxs {
		if c != ctx {
			t.Fatal("the engine did not receive the caller's context")
		}
	}
	if err := fx.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fx.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if e.closed != 1 {
		t.Fatalf("engine closed %d times, want 1", e.closed)
	}
	_, err = fx.svc.SearchSessions(ctx, SessionSearchRequest{Query: "alpha"})
	wantCode(t, err, CodeSearchDisabled)
}

func TestServiceKeyExposesExactReadsAndSearchUntilRemoved(t *testing.T) {
	h := host.New(nil)
	fx := newFixture(t, DefaultConfig())
	remove, err := host.Provide(h, ServiceKey, "", fx.svc)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := host.Get(h, ServiceKey)
	if !ok || got != fx.svc {
		t.Fatal("service key does not resolve to the service")
	}
	if _, err := got.ListSessions(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := got.SearchSessions(t.Context(), SessionSearchRequest{}); err == nil {
		t.Fatal("search without an engine succeeded")
	}
	remove()
	if _, ok := host.Get(h, ServiceKey); ok {
		t.Fatal("service key still resolves after removal")
	}
}

func TestPersistenceIsOptional(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, header("live", 1), "hi")
	records, err := fx.svc.ListSessions(t.Context())
	if err != nil || len(records) != 1 || !records[0].Live || records[0].Persisted {
		t.Fatalf("ListSessions = %+v, %v", records, err)
	}
	_, err = fx.svc.ListEvents(t.Context(), "absent")
	wantError(t, err, CodeSessionNotFound, `session "absent" not found`)
	if !errors.Is(fx.svc.Close(), nil) {
		t.Fatal("close failed")
	}
}
