package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// TestPartsRunOnATinyCorpus runs every in-process part on a corpus of a
// few dozen sessions, so that a change breaking the benchmark is caught by
// the tests rather than by the next `make bench`. The figures are not
// asserted, only that each part measured something.
func TestPartsRunOnATinyCorpus(t *testing.T) {
	l := layoutOf(t.TempDir())
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	m, err := benchcorpus.Generate(context.Background(), st, benchcorpus.Options{Sessions: 20, Seed: 7, TurnsMin: 1, TurnsMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	logf := func(string, ...any) {}
	build, err := partBuild(ctx, l, logf)
	if err != nil {
		t.Fatal(err)
	}
	if build.Sessions != m.Sessions || build.Events != int64(m.Events) || build.Seconds <= 0 {
		t.Errorf("build = %+v for %d sessions, %d events", build, m.Sessions, m.Events)
	}
	bare, err := partBare(ctx, l, 1, logf)
	if err != nil {
		t.Fatal(err)
	}
	if bare.Events != build.Events || bare.Docs == 0 || len(bare.Queries) != len(queries) {
		t.Errorf("bare = %+v", bare)
	}
	search, err := partSearch(ctx, l, 1, logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(search.Queries) != len(queries) || search.Queries[0].Hits != 1 || search.Queries[0].Sessions.P50 <= 0 {
		t.Errorf("search = %+v", search)
	}
	rec, err := partReconcile(ctx, l, logf)
	if err != nil {
		t.Fatal(err)
	}
	if rec.NoChange.P50 <= 0 || rec.SmallChange.P50 <= 0 {
		t.Errorf("reconcile = %+v", rec)
	}
	if entries, err := st.List(ctx); err != nil || len(entries) != m.Sessions {
		t.Errorf("the reconciliation part left %d sessions (%v), want the corpus's %d", len(entries), err, m.Sessions)
	}
	var toolLog []string
	tool, err := partTool(ctx, l, 1, func(format string, args ...any) { toolLog = append(toolLog, fmt.Sprintf(format, args...)) })
	if err != nil {
		t.Fatal(err)
	}
	// The part says itself whether session_search met issue 15's target,
	// so a run of -part tool alone answers it.
	if n := len(toolLog); n == 0 || !strings.HasPrefix(toolLog[n-1], toolTarget+": worst ") ||
		!(strings.HasSuffix(toolLog[n-1], ": met") || strings.HasSuffix(toolLog[n-1], ": MISSED")) {
		t.Errorf("the tool part's last line is not its verdict: %q", toolLog)
	}
	if len(tool.Queries) != len(queries) || tool.Queries[0].Header != "Session search results (1):" ||
		tool.Queries[0].Fresh.P50 <= 0 || tool.Queries[0].SessionsFresh.P50 <= 0 {
		t.Errorf("tool = %+v", tool)
	}
}

func TestParseBenchLineReadsGoTestBenchOutput(t *testing.T) {
	out := []byte("goos: linux\ngoarch: amd64\nBenchmarkOpenTenThousandEventSession-2   \t      10\t  15512345 ns/op\t 4194304 B/op\t   50326 allocs/op\nPASS\n")
	per, b, a, ok := parseBenchLine(out, "BenchmarkOpenTenThousandEventSession")
	if !ok || per != 15512345*time.Nanosecond || b != 4194304 || a != 50326 {
		t.Errorf("parseBenchLine = %v %d %d %v", per, b, a, ok)
	}
	if _, _, _, ok := parseBenchLine(out, "BenchmarkOther"); ok {
		t.Error("found a benchmark that did not run")
	}
}

// TestReportTable pins the table's layout on fixed figures (go test
// -update rewrites testdata/report.golden).
func TestReportTable(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	lat := func(p50, p95 float64) latency { return latency{ms(p50), ms(p95)} }
	r := &report{
		machine:   machine{CPUs: 2, MemBytes: 24 << 30, Model: "Test CPU", OS: "linux", Arch: "amd64", Go: "go1.26"},
		preset:    "large",
		corpus:    corpusInfo{Preset: "large", Sessions: 10000, Events: 1943923, Bytes: 634 << 20, GenSeconds: 39},
		build:     buildResult{Seconds: 46.8, Sessions: 10000, Events: 1943923, SizeBytes: 535 << 20},
		bare:      bareResult{InsertSeconds: 15.2, TotalSeconds: 37.2, Docs: 449302, Events: 1943923, SizeBytes: 523 << 20},
		search:    searchResult{FirstSearch: ms(4257)},
		reconcile: reconcileResult{NoChange: lat(0.03, 0.24), SmallChange: lat(3.2, 16.7)},
		tool:      toolResult{Workspace: "/home/dev/src/dsh"},
		rg:        rgResult{Queries: map[string]latency{}},
		acp:       acpResult{EmptyInit: lat(21.4, 47.8), EmptyChunk: lat(35.4, 60.9), EmptyRSS: 35 << 20, CorpusInit: lat(4258, 6490), CorpusRSS: 142 << 20, True: lat(1.23, 4.98), TrueRSS: 2 << 20},
		tui:       tuiResult{PerOpen: ms(15.5), BytesPerOp: 4 << 20, AllocsPerOp: 50326, MaxRSS: 35 << 20},
		mcp:       mcpResult{NewSession: lat(35.0, 52.4), NewSession3: lat(19.7, 59.3), Call: lat(6.79, 23.1), Direct: lat(1.79, 24.0), RSS: 26 << 20},
		live:      liveResult{First: lat(2.31, 21.1)},
		sandbox:   sandboxResult{Version: 7, Rules: 39, Sockets: true, Sandboxed: lat(2.1, 4.0), First: lat(11.0, 14.2), Launcher: lat(9.1, 12.0), True: lat(1.2, 3.3)},
	}
	r.rssFloor = 17 << 20
	r.rss.build, r.rss.bare, r.rss.search, r.rss.reconcile, r.rss.tool = 199<<20, 267<<20, 179<<20, 155<<20, 205<<20
	for i, q := range queries {
		f := float64(i + 1)
		r.search.Queries = append(r.search.Queries, searchQuery{query: q, Sessions: lat(f, 2*f), Workspace: lat(3*f, 4*f), Events: lat(f/2, f), Hits: 20})
		r.bare.Queries = append(r.bare.Queries, bareQuery{query: q, Sessions: lat(f/2, f), Events: lat(f, 2*f)})
		r.rg.Queries[q.Name] = lat(500+f, 600+f)
		r.tool.Queries = append(r.tool.Queries, toolQuery{query: q, Fresh: lat(10*f, 15*f), Warm: lat(5*f, 8*f), SessionsFresh: lat(5*f, 9*f), SessionsWarm: lat(f, 2*f), ScopedFresh: lat(6*f, 10*f), ScopedWarm: lat(2*f, 3*f), OutputBytes: 1000 * (i + 1), Header: "Session search results (1):"})
	}
	r.whole = wholeResult{Runs: 7, List: lat(21, 25), ListRows: 47, ListAll: lat(30, 41), Status: lat(9, 12), SearchRSS: 40 << 20, ListRSS: 30 << 20,
		ACPInit: lat(8, 11), ACPList: lat(2, 3), ACPListed: 47, ACPLoad: lat(31, 40), ACPLoaded: 512, ACPReplay: 380, Appended: lat(45, 70), AppendCPU: lat(30, 35), AppendHits: 10,
		BigAppend: bigAppend{Wall: lat(52, 66), CPU: lat(40, 44), Hits: 10, MinBytes: 312 << 10, MaxBytes: 3 << 19}, LoadBefore: "1.00 1.10 1.20", LoadAfter: "1.30 1.20 1.20",
		ListCPU: lat(15, 17), ListAllCPU: lat(20, 22), StatusCPU: lat(6, 7),
		Resume:  resumeResult{Picker: lat(48, 61), Ready: lat(150, 180), Status: "47 sessions"},
		Rebuild: rebuildResult{Wall: ms(24300), CPU: ms(39100), Sessions: 10047, Events: 1948923, IndexBytes: 535 << 20, LogBytes: 713 << 20, RSS: 148 << 20}}
	for i, q := range queries {
		f := float64(i + 1)
		r.whole.Searches = append(r.whole.Searches, wholeSearch{query: q, DSH: lat(10*f, 12*f), CPU: lat(8*f, 9*f), RG: lat(250, 270), Hits: 20})
	}
	r.whole.FirstIdent = wholeSearch{DSH: lat(35, 41), CPU: lat(33, 36), Hits: 20}
	r.whole.Floor, r.whole.Version, r.whole.VersionCPU = lat(1.1, 1.4), lat(3.5, 4.2), lat(2.9, 3.1)
	r.rss.bigWithout, r.rss.bigWith = 60<<20, 72<<20
	r.big.without.FirstSearch, r.big.with.FirstSearch = ms(900), ms(1400)
	for i, q := range bigQueries {
		f := float64(i + 1)
		r.big.without.Queries = append(r.big.without.Queries, bigQuery{query: q, Sessions: lat(f, 2*f), Events: lat(f/2, f)})
		r.big.with.Queries = append(r.big.with.Queries, bigQuery{query: q, Sessions: lat(f+1, 2*f+1), Events: lat(f+3, f+4)})
	}
	var b strings.Builder
	r.print(&b)
	goldie.New(t).Assert(t, "report", []byte(b.String()))
}

// TestEnsureWorkspaceResetsTheSessionsARowGrew pins that every run
// measures sessions of the same size: a workspace session the
// appended-events row grew (or that an older harness left untitled) is
// made again as the harness first made it, and the others are kept.
func TestEnsureWorkspaceResetsTheSessionsARowGrew(t *testing.T) {
	ctx := context.Background()
	l := layoutOf(t.TempDir())
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	if _, err := ensureWorkspace(ctx, l); err != nil {
		t.Fatal(err)
	}
	grown, kept := workspaceIDs(2)[0], workspaceIDs(2)[1]
	_, made, err := st.Inspect(ctx, grown)
	if err != nil {
		t.Fatal(err)
	}
	keptEntry, err := st.Stat(ctx, kept)
	if err != nil {
		t.Fatal(err)
	}
	w, _, events, err := st.Open(ctx, grown)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(turnWith(len(events), 1, time.Now().UnixMilli(), "look at grown again")...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ensureWorkspace(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, again, err := st.Inspect(ctx, grown); err != nil || len(again) != len(made) {
		t.Errorf("the grown session holds %d events (%v), want the %d it was made with", len(again), err, len(made))
	}
	if e, err := st.Stat(ctx, kept); err != nil || e.Revision != keptEntry.Revision {
		t.Errorf("an unchanged session was made again: %s, then %s (%v)", keptEntry.Revision, e.Revision, err)
	}
}

// TestBigAppendLeavesTheCorpusAsItWas pins that the appended-events row
// on the largest sessions appends to copies it removes, never to the
// corpus's logs.
func TestBigAppendLeavesTheCorpusAsItWas(t *testing.T) {
	ctx := context.Background()
	l := layoutOf(t.TempDir())
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	if _, err := benchcorpus.Generate(ctx, st, benchcorpus.Options{Sessions: 15, Seed: 3, TurnsMin: 1, TurnsMax: 3}); err != nil {
		t.Fatal(err)
	}
	before, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	searched := 0
	res, err := measureBigAppend(ctx, l, 2, func(args ...string) (measured, error) {
		searched++
		copies := 0
		entries, err := st.List(ctx)
		for _, e := range entries {
			if strings.HasPrefix(e.Header.ID, bigAppendPrefix) {
				copies++
				// In a workspace of their own: made beside their
				// originals, they would change those directories.
				if e.Header.Cwd == nil || *e.Header.Cwd != bigAppendCwd {
					t.Errorf("copy %s is in workspace %v, want %s", e.Header.ID, e.Header.Cwd, bigAppendCwd)
				}
			}
		}
		return measured{stdout: []byte(fmt.Sprintf("[%s]", strings.TrimSuffix(strings.Repeat(`{},`, copies), ",")))}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if searched != 3 || res.Hits != 10 {
		t.Errorf("%d searches, %d hits; want 3 (a warm-up and 2 runs) finding the 10 copies", searched, res.Hits)
	}
	after, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("%d sessions after the row, %d before", len(after), len(before))
	}
	for i := range before {
		if after[i].Header.ID != before[i].Header.ID || after[i].Revision != before[i].Revision {
			t.Errorf("session %s changed: %s, then %s", before[i].Header.ID, before[i].Revision, after[i].Revision)
		}
	}
}
