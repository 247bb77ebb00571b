package searchindex

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

func titled(events []session.Event, title string, at int64) []session.Event {
	e := ev(len(events), session.TypeSessionTitle, session.SessionTitle{Title: title, MessageSeqs: []int{0}, Source: []byte(`{"kind":"fallback"}`)})
	e.Time = at
	return append(events, e)
}

func summaryIDs(p sessionquery.SummaryPage) []string {
	out := []string{}
	for _, s := range p.Items {
		out = append(out, s.Header.ID)
	}
	return out
}

func TestSummariesPageTheCatalogNewestFirstWithoutReadingLogs(t *testing.T) {
	f, feed := newFeedFixture(t)
	other := "/other"
	f.persist(hdr("a", 1), titled(texts("one"), "first session", 1_700_000_000_500))
	f.persist(hdr("b", 2), texts("two", "reply"))
	f.persist(session.Header{ID: "c", CreatedAt: 3, Cwd: &other}, texts("three"))
	f.persist(session.Header{ID: "d", CreatedAt: 3}, texts("no workspace"))
	ctx := context.Background()
	all, err := f.ix.Summaries(ctx, sessionquery.SummaryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := summaryIDs(all); !reflect.DeepEqual(got, []string{"c", "d", "b", "a"}) || all.Total != 4 || all.More {
		t.Errorf("all = %v (total %d, more %v)", got, all.Total, all.More)
	}
	a := all.Items[3]
	if a.Title == nil || a.Title.Title != "first session" || a.Events != 2 || a.LastEventAt != 1_700_000_000_500 ||
		a.LogBytes == 0 || !a.Persisted || a.Live || a.UpdatedAt() != 1_700_000_000_500 {
		t.Errorf("a = %+v", a)
	}
	feed.reset()
	w := "/w"
	page, err := f.ix.Summaries(ctx, sessionquery.SummaryRequest{Cwds: []string{w}, Limit: 1})
	if err != nil || !reflect.DeepEqual(summaryIDs(page), []string{"b"}) || !page.More || page.Total != 2 {
		t.Fatalf("first page = %v %+v, %v", summaryIDs(page), page, err)
	}
	page, err = f.ix.Summaries(ctx, sessionquery.SummaryRequest{Cwds: []string{w}, Limit: 1, After: &sessionquery.SummaryPosition{CreatedAt: 2, ID: "b"}})
	if err != nil || !reflect.DeepEqual(summaryIDs(page), []string{"a"}) || page.More {
		t.Fatalf("second page = %v %+v, %v", summaryIDs(page), page, err)
	}
	// A workspace reached through two forms (session.Workspace.Forms)
	// keeps the sessions stored under either, and only those.
	page, err = f.ix.Summaries(ctx, sessionquery.SummaryRequest{Cwds: []string{w, other, "/w/"}})
	if err != nil || !reflect.DeepEqual(summaryIDs(page), []string{"c", "b", "a"}) || page.Total != 3 {
		t.Errorf("two forms = %v %+v, %v", summaryIDs(page), page, err)
	}
	page, err = f.ix.Summaries(ctx, sessionquery.SummaryRequest{Cwds: []string{}})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("no form = %v, %v", summaryIDs(page), err)
	}
	page, err = f.ix.Summaries(ctx, sessionquery.SummaryRequest{RequireCwd: true})
	if err != nil || !reflect.DeepEqual(summaryIDs(page), []string{"c", "b", "a"}) {
		t.Errorf("with a workspace = %v, %v", summaryIDs(page), err)
	}
	if lists, snaps, inspects := feed.reset(); lists+snaps+len(inspects) != 0 {
		t.Errorf("listing cost %d listings, %d stats, inspections %v", lists, snaps, inspects)
	}

	// A live session overlays its persisted copy.
	l := f.live(hdr("b", 2), titled(texts("two", "reply", "three"), "live title", 1_700_000_200_000))
	defer f.reg.Detach(l)
	sums, err := f.ix.SummariesOf(ctx, []string{"b", "a", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	b := sums["b"]
	if len(sums) != 2 || !b.Live || !b.Persisted || b.Events != 4 || b.Title == nil || b.Title.Title != "live title" || b.LogBytes == 0 {
		t.Errorf("summaries of = %+v", sums)
	}
}

func TestUnreadableLogIsCataloguedAndDoesNotFailSearch(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("good", 1), texts("needle good"))
	f.persist(hdr("bad", 2), texts("needle bad"))
	entry, err := f.st.Stat(context.Background(), "bad")
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(entry.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString("{not json\n")
	fh.Close()
	if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); !reflect.DeepEqual(got, []string{"good"}) {
		t.Errorf("search = %v", got)
	}
	sums, err := f.ix.SummariesOf(context.Background(), []string{"bad"})
	if err != nil || sums["bad"].Unreadable == "" || sums["bad"].Events != 0 {
		t.Errorf("bad = %+v, %v", sums["bad"], err)
	}
}

// Pages cut from the kept ranking are the pages a fresh ranking gives:
// beyond the kept rows too, and with a live session among the hits.
func TestPagesOfAKeptRankingMatchOneLargePage(t *testing.T) {
	f := newFixture(t)
	for i := range 130 {
		text := "needle"
		for range i % 7 {
			text += " filler"
		}
		f.persist(hdr(fmt.Sprintf("s%03d", i), int64(i)), texts(text))
	}
	l := f.live(hdr("live", 500), texts("needle filler filler"))
	defer f.reg.Detach(l)
	all := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(100)})
	rest := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(100), Cursor: all.NextCursor})
	want := append(sessionIDs(all), sessionIDs(rest)...)
	if len(want) != 131 {
		t.Fatalf("%d hits", len(want))
	}
	var got []string
	var cursor *string
	for {
		p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(20), Cursor: cursor})
		got = append(got, sessionIDs(p)...)
		if p.NextCursor == nil {
			break
		}
		cursor = p.NextCursor
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paged = %v\nwant    %v", got, want)
	}
}

// A page of every workspace's sessions reads a big catalog through
// persisted_sessions_order, made by the first such page once the catalog
// holds orderIndexFrom sessions; a smaller catalog, and a page of one
// workspace, never make it. The pages are the same with it as without.
func TestABigCatalogIsPagedThroughItsOrderIndex(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	hasIndex := func() bool {
		return f.count(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'persisted_sessions_order'`) == 1
	}
	pages := func() [][]string {
		var out [][]string
		var after *sessionquery.SummaryPosition
		for {
			p, err := f.ix.Summaries(ctx, sessionquery.SummaryRequest{Limit: 200, After: after})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, summaryIDs(p))
			if !p.More {
				return out
			}
			last := p.Items[len(p.Items)-1].Header
			after = &sessionquery.SummaryPosition{CreatedAt: last.CreatedAt, ID: last.ID}
		}
	}
	// Ties on created_at are ordered by id.
	for i := range orderIndexFrom - 1 {
		f.persist(hdr(fmt.Sprintf("s%04d", i), int64(i/3)), texts("x"))
	}
	small := pages()
	if hasIndex() {
		t.Fatalf("a catalog of %d sessions got the order index", orderIndexFrom-1)
	}
	f.persist(hdr("s9999", 0), texts("x"))
	if _, err := f.ix.Summaries(ctx, sessionquery.SummaryRequest{Cwds: []string{"/w"}, Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if hasIndex() {
		t.Fatal("a page of one workspace made the order index")
	}
	f.ix.Close()
	f.ix = f.newIndex(f.cfg)
	var want [][]string
	func() {
		// The same pages, sorted without the index, as the reference.
		p, err := f.ix.Summaries(ctx, sessionquery.SummaryRequest{Cwds: []string{"/w"}})
		if err != nil {
			t.Fatal(err)
		}
		ids := summaryIDs(p)
		for len(ids) > 200 {
			want, ids = append(want, ids[:200]), ids[200:]
		}
		want = append(want, ids)
	}()
	got := pages()
	if !hasIndex() {
		t.Fatalf("a catalog of %d sessions paged without the order index", orderIndexFrom)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pages through the index differ from the sorted ones")
	}
	if len(small) != 3 || len(got) != 3 || len(got[2]) != orderIndexFrom-400 {
		t.Errorf("pages of %d and %d", len(small), len(got))
	}
	var plan []string
	if err := f.ix.begin(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := f.ix.db.conn.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT `+summaryColumns+` FROM persisted_sessions ORDER BY created_at DESC, session_id LIMIT 51`)
	if err == nil {
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err == nil {
				plan = append(plan, detail)
			}
		}
		rows.Close()
	}
	f.ix.queue.release()
	if err != nil || fmt.Sprint(plan) != "[SCAN persisted_sessions USING INDEX persisted_sessions_order]" {
		t.Errorf("plan = %q, %v", plan, err)
	}
}

// An id prefix selects a range of the session_id index: the ids that
// start with it, live and persisted, newest first, and no other.
func TestSummariesOfAnIDPrefix(t *testing.T) {
	f := newFixture(t)
	for i, id := range []string{"aa", "ab", "ab1", "ab~", "ac", "b"} {
		f.persist(hdr(id, int64(i)), texts("x"))
	}
	l := f.live(hdr("ab9", 9), texts("live"))
	defer f.reg.Detach(l)
	ctx := context.Background()
	for prefix, want := range map[string][]string{
		"ab":  {"ab9", "ab~", "ab1", "ab"},
		"ab1": {"ab1"},
		"a":   {"ab9", "ac", "ab~", "ab1", "ab", "aa"},
		"abz": {},
		"":    {"ab9", "b", "ac", "ab~", "ab1", "ab", "aa"},
	} {
		page, err := f.ix.Summaries(ctx, sessionquery.SummaryRequest{IDPrefix: prefix})
		if err != nil || !reflect.DeepEqual(summaryIDs(page), want) || page.Total != len(want) {
			t.Errorf("prefix %q: %v (total %d), %v; want %v", prefix, summaryIDs(page), page.Total, err, want)
		}
	}
}

func TestPrefixSuccessorBoundsEveryExtension(t *testing.T) {
	for p, want := range map[string]string{"ab": "ac", "a\xff": "b", "a\xff\xff": "b", "0": "1"} {
		if got, ok := prefixSuccessor(p); !ok || got != want {
			t.Errorf("prefixSuccessor(%q) = %q, %v; want %q", p, got, ok, want)
		}
	}
	if got, ok := prefixSuccessor("\xff\xff"); ok {
		t.Errorf("prefixSuccessor of 0xff bytes = %q, want no bound", got)
	}
}

// A rebuild of a catalog of orderIndexFrom sessions makes the order index
// in the built file, so the first listing after it has nothing to sort
// and write; a smaller catalog's rebuild does not.
func TestARebuildOfABigCatalogCarriesItsOrderIndex(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	hasIndex := func() bool {
		return f.count(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'persisted_sessions_order'`) == 1
	}
	for i := range orderIndexFrom - 1 {
		f.persist(hdr(fmt.Sprintf("s%04d", i), int64(i)), texts("x"))
	}
	if err := f.ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if hasIndex() {
		t.Fatalf("the rebuild of %d sessions made the order index", orderIndexFrom-1)
	}
	f.persist(hdr("s9999", orderIndexFrom), texts("x"))
	if err := f.ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if !hasIndex() {
		t.Fatalf("the rebuild of %d sessions has no order index", orderIndexFrom)
	}
	p, err := f.ix.Summaries(ctx, sessionquery.SummaryRequest{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := summaryIDs(p); !reflect.DeepEqual(got, []string{"s9999", fmt.Sprintf("s%04d", orderIndexFrom-2)}) {
		t.Errorf("newest after the rebuild: %v", got)
	}
}

// The catalog's totals, which Status and the count of every workspace's
// sessions read, equal a count of the catalog after every kind of write:
// new sessions, appends, a session rewritten shorter, a deleted log and a
// rebuild (of a file, built beside it, and of an in-memory index, in
// place).
func TestCatalogTotalsFollowEveryWrite(t *testing.T) {
	for name, opts := range map[string][]fixtureOpt{"file": nil, "memory": {func(c *Config) { c.Path = MemoryPath }}} {
		t.Run(name, func(t *testing.T) { testCatalogTotals(t, newFixture(t, opts...)) })
	}
}

func testCatalogTotals(t *testing.T, f *fixture) {
	ctx := context.Background()
	check := func(when string) {
		t.Helper()
		p, err := f.ix.Summaries(ctx, sessionquery.SummaryRequest{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.ix.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sessions := f.count(`SELECT count(*) FROM persisted_sessions`)
		events := f.count(`SELECT coalesce(sum(event_count), 0) FROM persisted_sessions`)
		if st.Sessions != sessions || st.Events != int64(events) || p.Total != sessions {
			t.Errorf("%s: status %d sessions, %d events; page total %d; the catalog holds %d and %d",
				when, st.Sessions, st.Events, p.Total, sessions, events)
		}
		if sessions == 0 && when != "empty" {
			t.Fatalf("%s: the catalog is empty", when)
		}
	}
	check("empty")
	f.persist(hdr("a", 1), texts("one", "two", "three"))
	f.persist(hdr("b", 2), texts("four"))
	f.persist(hdr("c", 3), texts("five", "six"))
	check("after three new sessions")
	f.appendFlushed("a", "seven", "eight")
	check("after an append")
	f.removeLog("c")
	f.removeLog("b")
	f.persist(hdr("b", 2), texts("nine", "ten", "eleven", "twelve"))
	check("after a deleted log and one written again")
	if err := f.ix.Rebuild(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check("after a rebuild")
	if st, _ := f.ix.Status(ctx); st.Sessions != 2 || st.Events != 9 {
		t.Errorf("status after the rebuild: %d sessions, %d events, want 2 and 9", st.Sessions, st.Events)
	}
}
