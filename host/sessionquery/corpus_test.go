package sessionquery

import (
	"context"
	"errors"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/session/sessiontest"
)

func TestListSessionsOrdersNewestFirstThenByID(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, session.Header{ID: "z", CreatedAt: 10, Cwd: ptr("/w")})
	fx.attach(t, header("older", 5))
	fx.attach(t, header("a", 10))
	records, err := fx.svc.ListSessions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(records); !equalIDs(got, "a", "z", "older") {
		t.Fatalf("order = %v, want [a z older]", got)
	}
	for _, r := range records {
		if !r.Live || r.Persisted {
			t.Fatalf("record %s live=%v persisted=%v", r.Header.ID, r.Live, r.Persisted)
		}
	}
	*records[1].Header.Cwd = "/mutated"
	records[0].Header.ID = "mutated"
	again, _ := fx.svc.ListSessions(t.Context())
	if *again[1].Header.Cwd != "/w" || again[0].Header.ID != "a" {
		t.Fatal("mutating listed headers changed the next listing")
	}
}

func TestListSessionsUsesLocaleAwareIDOrder(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	for _, id := range []string{"B", "a", "b", "A", "é", "e", "f", "10", "9"} {
		fx.attach(t, header(id, 1))
	}
	records, err := fx.svc.ListSessions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// ICU root collation, as JavaScript's localeCompare: lowercase before
	// uppercase, accents after the base letter, digits compared as text.
	if got := ids(records); !equalIDs(got, "10", "9", "a", "A", "b", "B", "e", "é", "f") {
		t.Fatalf("order = %v", got)
	}
}

func TestCorpusMergesLiveAndPersistedRecords(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	shared := session.Header{ID: "shared", CreatedAt: 2, Cwd: ptr("/w"), Origin: ptr("subagent"), AgentPreset: ptr("live-preset")}
	p := newFake().
		add(session.Header{ID: "shared", CreatedAt: 2, Cwd: ptr("/w"), AgentPreset: ptr("durable-preset"), Owner: ptr("o")}, userLog("durable")...).
		add(header("durable", 1), userLog("only stored")...)
	unmount := fx.svc.Mount(p)
	fx.attach(t, shared, "live")
	records, err := fx.svc.ListSessions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(records); !equalIDs(got, "shared", "durable") {
		t.Fatalf("ids = %v", got)
	}
	if r := records[0]; !r.Live || !r.Persisted || *r.Header.AgentPreset != "live-preset" {
		t.Fatalf("shared record = %+v, want live data, live and persisted", r)
	}
	if r := records[1]; r.Live || !r.Persisted {
		t.Fatalf("durable record = %+v", r)
	}
	unmount()
	records, err = fx.svc.ListSessions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 1 || records[0].Header.ID != "shared" || !records[0].Live || records[0].Persisted {
		t.Fatalf("after unmount = %+v", records)
	}
}

func TestConflictingHeadersAreSourceConflicts(t *testing.T) {
	cases := []struct {
		name            string
		live, persisted session.Header
		conflict        bool
	}{
		{"cwd differs", session.Header{ID: "s", Cwd: ptr("/a")}, session.Header{ID: "s", Cwd: ptr("/b")}, true},
		{"cwd absent on one side", session.Header{ID: "s", Cwd: ptr("/a")}, session.Header{ID: "s"}, true},
		{"depth 1 against absent", session.Header{ID: "s", DelegationDepth: ptr(1)}, session.Header{ID: "s"}, true},
		{"depth 0 against absent", session.Header{ID: "s", DelegationDepth: ptr(0)}, session.Header{ID: "s"}, false},
		{"createdAt differs", session.Header{ID: "s", CreatedAt: 1}, session.Header{ID: "s", CreatedAt: 2}, true},
		{"parent differs", session.Header{ID: "s", ParentSession: ptr("p")}, session.Header{ID: "s"}, true},
		{"seed length differs", session.Header{ID: "s", SeedLength: ptr(2)}, session.Header{ID: "s", SeedLength: ptr(3)}, true},
		{"version differs", session.Header{ID: "s", Version: 1}, session.Header{ID: "s"}, true},
		{"origin, preset and owner are ignored", session.Header{ID: "s", Origin: ptr("subagent"), AgentPreset: ptr("a"), Owner: ptr("x")}, session.Header{ID: "s", AgentPreset: ptr("b")}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, DefaultConfig())
			fx.mount(t, newFake().add(tc.persisted))
			fx.attach(t, tc.live)
			_, err := fx.svc.ListSessions(t.Context())
			if !tc.conflict {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, CodeSourceConflict, `session source headers conflict for session "s"`)
		})
	}
}

func TestKnownLiveTargetsNeverTouchPersistence(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake().add(header("s", 1), userLog("durable")...)
	p.ListErr = errors.New("list would fail")
	p.InspectErr["s"] = errors.New("inspect would fail")
	fx.mount(t, p)
	fx.attach(t, header("s", 1), "live")
	ctx := t.Context()
	if _, err := fx.svc.ListEvents(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.svc.TraceEvent(ctx, "s", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.svc.ReadEvent(ctx, "s", 0, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.svc.ReadTitleSnapshots(ctx, []string{"s"}); err != nil {
		t.Fatal(err)
	}
	if len(p.Calls()) != 0 {
		t.Fatalf("live reads made %d persistence calls", len(p.Calls()))
	}
	_, err := fx.svc.ListSessions(ctx)
	wantError(t, err, CodePersistenceFailed, "session persistence listing failed: list would fail")
	_, err = fx.svc.ListEvents(ctx, "other")
	wantCode(t, err, CodePersistenceFailed)
}

func TestPersistedReadFailures(t *testing.T) {
	corrupt := &sessiontest.CorruptError{Msg: "stored prefix failed validation"}
	boom := errors.New("boom")
	cases := []struct {
		name    string
		setup   func(p *fakePersistence)
		id      string
		code    string
		message string
		cause   error
	}{
		{"corrupt log", func(p *fakePersistence) {
			p.add(header("durable-corrupt", 1))
			p.InspectErr["durable-corrupt"] = corrupt
		}, "durable-corrupt", CodeCorruptSession, `stored session "durable-corrupt" is corrupt: stored prefix failed validation`, corrupt},
		{"plain inspect failure", func(p *fakePersistence) {
			p.add(header("x", 1))
			p.InspectErr["x"] = boom
		}, "x", CodePersistenceFailed, `failed to inspect session "x": boom`, boom},
		{"message-less failure", func(p *fakePersistence) {
			p.add(header("x", 1))
			p.InspectErr["x"] = errors.New("")
		}, "x", CodePersistenceFailed, `failed to inspect session "x": unknown error`, nil},
		{"listing failure", func(p *fakePersistence) { p.ListErr = boom }, "x", CodePersistenceFailed, "session persistence listing failed: boom", boom},
		{"absent id", func(p *fakePersistence) { p.add(header("other", 1)) }, "absent", CodeSessionNotFound, `session "absent" not found`, nil},
		{"listed and inspected headers differ", func(p *fakePersistence) {
			p.add(session.Header{ID: "x", Cwd: ptr("/a")})
			p.InspectHeader("x", session.Header{ID: "x", Cwd: ptr("/b")})
		}, "x", CodeSourceConflict, `session source headers conflict for session "x"`, nil},
		{"persisted surface event without surfaceOp", func(p *fakePersistence) {
			e := ev(0, session.TypeUserMessage, userText("x"))
			e.SurfaceOp = nil
			p.add(header("x", 1), e)
		}, "x", CodeInvalidSurface, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, DefaultConfig())
			p := newFake()
			tc.setup(p)
			fx.mount(t, p)
			_, err := fx.svc.ListEvents(t.Context(), tc.id)
			if tc.message == "" {
				wantCode(t, err, tc.code)
			} else {
				wantError(t, err, tc.code, tc.message)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Fatalf("%v lost its cause %v", err, tc.cause)
			}
		})
	}
	fx := newFixture(t, DefaultConfig())
	_, err := fx.svc.ListEvents(t.Context(), "absent")
	wantError(t, err, CodeSessionNotFound, `session "absent" not found`)
}

func TestFiltersAreCopiedAtCallTime(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake().add(header("a", 2), userLog("alpha", "beta")...).add(header("b", 1))
	sf := []SessionFilter{{Kind: KindID, Values: []string{"a"}}}
	ef := []EventFilter{{Kind: KindText, Text: "alpha"}}
	fx.mount(t, p)
	// Mutate the caller's filters while the call is inside the backend.
	p.ListHook = func(context.Context, int) {
		sf[0].Values[0] = "b"
		ef[0].Text = "beta"
	}
	records, err := fx.svc.FilterSessions(t.Context(), sf)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(records); !equalIDs(got, "a") {
		t.Fatalf("FilterSessions = %v, want the filters as passed", got)
	}
	sf[0].Values[0] = "a"
	ef[0].Text = "alpha"
	docs, err := fx.svc.FilterEvents(t.Context(), "a", ef)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Text != "alpha" {
		t.Fatalf("FilterEvents = %+v, want the filters as passed", docs)
	}
	_, err = fx.svc.FilterSessions(t.Context(), []SessionFilter{{Kind: "future"}})
	wantError(t, err, CodeInvalidFilter, `session unknown filter kind "future"`)
	_, err = fx.svc.FilterEvents(t.Context(), "a", []EventFilter{{Kind: "future"}})
	wantError(t, err, CodeInvalidFilter, `session unknown filter kind "future"`)
}

func TestFilterValidationPrecedesAnyRead(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake()
	fx.mount(t, p)
	_, err := fx.svc.FilterEvents(t.Context(), "absent", []EventFilter{{Kind: KindText, Text: "  "}})
	wantCode(t, err, CodeInvalidFilter)
	_, err = fx.svc.FilterSessions(t.Context(), []SessionFilter{{Kind: KindAvailability, Values: []string{"gone"}}})
	wantCode(t, err, CodeInvalidFilter)
	if len(p.Calls()) != 0 {
		t.Fatalf("invalid filters reached the backend: %+v", p.Calls())
	}
}

func TestFilterEventsScansLiveSemanticText(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, header("live", 1), "Alpha\n beta", "gamma")
	docs, err := fx.svc.FilterEvents(t.Context(), "live", []EventFilter{{Kind: KindText, Text: "alpha beta"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Seq != 0 || docs[0].SessionID != "live" || docs[0].Surface != SurfaceCurrent {
		t.Fatalf("documents = %+v", docs)
	}
}
