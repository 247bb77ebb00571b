package sessionquery

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// sqliteEngine returns a factory for the real SQLite FTS index in a fresh
// temporary database, opened at once (the ACP/TUI "startup" mode).
func sqliteEngine(t *testing.T) func(*sq.Service) sq.SearchEngine {
	return func(svc *sq.Service) sq.SearchEngine {
		t.Helper()
		ix, err := searchindex.New(searchindex.DefaultConfig(filepath.Join(t.TempDir(), "session-query.db")), svc, searchindex.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		return ix
	}
}

func TestSQLiteForeignNonexistentAndAliasedTargetsAreDeniedIdentically(t *testing.T) {
	testTargetsDeniedIdentically(t, sqliteEngine(t))
}

func TestSQLiteSessionSearchShowsOnlyTheWorkspace(t *testing.T) {
	testSearchShowsOnlyTheWorkspace(t, sqliteEngine(t))
}

func TestSQLiteForeignParentFiltersAreByteIdenticalToNoSuchIDs(t *testing.T) {
	testForeignParentsChangeNothing(t, sqliteEngine(t))
}

func TestSQLiteCurrentSessionSearchExcludesTheRunningStep(t *testing.T) {
	testSelfSearchExcludesTheRunningStep(t, sqliteEngine(t))
}

func TestSQLiteRenderedOutputs(t *testing.T) {
	testRenderedOutputs(t, sqliteEngine(t), "testdata/render-sqlite")
}

func TestSQLitePersistedSessionIsFoundAndSelfSearchSeesThePriorStep(t *testing.T) {
	fx := newCorpusFixture(t, sqliteEngine(t))
	o := outcomeOf(t, fx.run(t, ToolSessionSearch, `{"query":"reply in mine"}`))
	mustContain(t, "session_search", o.Text, "Session search results (1):\n\n1. Session mine — Needle hunt\n", "   Availability: persisted\n",
		"   Best match: seq 1 | assistant/message | current | 1970-01-01T00:00:01.001Z")
	o = outcomeOf(t, fx.run(t, ToolEventSearch, `{"query":"needle in mine","session_id":"mine"}`))
	mustContain(t, "session_event_search", o.Text, "Session mine — Needle hunt\n\nEvent search results (1):\n1. seq 0 | user/message | current |")
	// The caller's own log: seq 1 is before the running step and is found;
	// the tool/call of this very step (seq 3) carries the query and is not.
	o = outcomeOf(t, fx.run(t, ToolEventSearch, `{"query":"needle"}`))
	mustContain(t, "self search", o.Text, "Event search results (1):\n1. seq 1 | user/message | current |")
}

// fractionsFixture is a workspace session whose events sit on both sides of
// millisecond boundaries: seq 0 at +123 ms and seq 1 at +124 ms after
// 2026-07-24T00:00Z, seq 2 at -124 ms and seq 3 at -123 ms from the epoch.
func fractionsFixture(t *testing.T) *corpusFixture {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	st := store.New(filepath.Join(root, "sessions"), store.Options{Log: slog.New(slog.DiscardHandler)})
	base := time.Date(2026, 7, 24, 0, 0, 0, 0, time.UTC).UnixMilli()
	times := []int64{base + 123, base + 124, -124, -123}
	var events []session.Event
	for i, tm := range times {
		e := ev(i, session.TypeUserMessage, userMsg("needle fraction"))
		e.Time = tm
		events = append(events, e)
	}
	w, err := st.Create(hdr("fractions", 5, ws, ""), events)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	caller := callerLive("caller", ws)
	svc := realService(t, caller)
	t.Cleanup(svc.Mount(sq.NewStorePersistence(st)))
	svc.SetEngine(sqliteEngine(t)(svc))
	return &corpusFixture{ws: ws, svc: svc, caller: caller, h: newHarness(t, svc, DefaultConfig())}
}

func TestSQLiteFractionalTimeBoundsSelectExactlyTheRightEvents(t *testing.T) {
	fx := fractionsFixture(t)
	seqsOf := func(args string) string {
		t.Helper()
		o := outcomeOf(t, fx.run(t, ToolEventSearch, args))
		if o.IsError {
			t.Fatalf("%s: %s", args, o.Text)
		}
		return o.Text
	}
	cases := []struct {
		args    string
		has     []string
		hasNot  []string
		exactly string
	}{
		{args: `{"session_id":"fractions","query":"needle","time_from":"2026-07-24T00:00:00.12300001Z"}`,
			has: []string{"seq 1 |"}, hasNot: []string{"seq 0 |", "seq 2 |", "seq 3 |"}},
		{args: `{"session_id":"fractions","query":"needle","time_to":"2026-07-24T08:00:00.1239999+08:00","seq_from":0,"seq_to":1}`,
			has: []string{"seq 0 |"}, hasNot: []string{"seq 1 |"}},
		{args: `{"session_id":"fractions","query":"needle","time_from":"2026-07-24T00:00:00.12300001Z","time_to":"2026-07-24T00:00:00.1239999Z"}`,
			exactly: "Session fractions — untitled\n\n" + noEventMatches},
		{args: `{"session_id":"fractions","query":"needle","time_from":"1969-12-31T23:59:59.87600001Z","seq_from":2}`,
			has: []string{"seq 3 |"}, hasNot: []string{"seq 2 |"}},
		{args: `{"session_id":"fractions","query":"needle","time_to":"1969-12-31T23:59:59.8769999Z"}`,
			has: []string{"seq 2 |"}, hasNot: []string{"seq 3 |", "seq 0 |", "seq 1 |"}},
	}
	for _, tc := range cases {
		text := seqsOf(tc.args)
		if tc.exactly != "" && text != tc.exactly {
			t.Fatalf("%s:\n%s", tc.args, text)
		}
		mustContain(t, tc.args, text, tc.has...)
		mustNotContain(t, tc.args, text, tc.hasNot...)
	}
}

// TestSQLiteCursorsAreDrainedAcrossPages drains the index's own cursors
// (20 hits per page by default) inside one call, to the cap and below it.
func TestSQLiteCursorsAreDrainedAcrossPages(t *testing.T) {
	ws := "/work/paging"
	var events []session.Event
	for i := range 45 {
		events = append(events, ev(i, session.TypeUserMessage, userMsg(fmt.Sprintf("needle number %d", i))))
	}
	caller := callerLive("caller", ws)
	var lives = []*session.Live{caller, liveWith(hdr("many", 2, ws, ""), events...)}
	for i := range 30 {
		lives = append(lives, liveWith(hdr(fmt.Sprintf("s%02d", i), int64(10+i), ws, ""), ev(0, session.TypeUserMessage, userMsg("needle"))))
	}
	svc := realService(t, lives...)
	svc.SetEngine(sqliteEngine(t)(svc))
	for _, tc := range []struct {
		max        int
		tool, args string
		results    string
		capped     bool
	}{
		{40, ToolEventSearch, `{"session_id":"many","query":"needle"}`, "Event search results (40):", true},
		{45, ToolEventSearch, `{"session_id":"many","query":"needle"}`, "Event search results (45):", false},
		{100, ToolSessionSearch, `{"query":"needle"}`, "Session search results (31):", false},
		{25, ToolSessionSearch, `{"query":"needle"}`, "Session search results (25):", true},
	} {
		f := spy(t, svc)
		h := newHarness(t, f, Config{MaxSearchResults: tc.max})
		o := outcomeOf(t, h.run(context.Background(), caller, tc.tool, tc.args))
		if o.IsError || !strings.Contains(o.Text, tc.results+"\n") {
			t.Fatalf("max %d %s: %s", tc.max, tc.tool, o.Text[:min(len(o.Text), 200)])
		}
		if strings.HasSuffix(o.Text, capLine) != tc.capped {
			t.Fatalf("max %d %s: capped=%v, want %v", tc.max, tc.tool, !tc.capped, tc.capped)
		}
		pages := f.count("SearchEvents") + f.count("SearchSessions")
		if pages < 2 {
			t.Fatalf("max %d %s: %d pages, want several", tc.max, tc.tool, pages)
		}
	}
}
