package searchindex

import (
	"context"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// tempTables counts the tables of ix's connection's temp schema.
func tempTables(t *testing.T, ix *Index) int {
	t.Helper()
	return countTemp(t, ix, `SELECT count(*) FROM sqlite_temp_master WHERE type = 'table'`)
}

// liveTempTables counts those of the live overlay.
func liveTempTables(t *testing.T, ix *Index) int {
	t.Helper()
	return countTemp(t, ix, `SELECT count(*) FROM sqlite_temp_master WHERE type = 'table' AND name LIKE 'live%'`)
}

func countTemp(t *testing.T, ix *Index, query string) int {
	t.Helper()
	var n int
	if err := ix.db.conn.QueryRowContext(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A process that only reads the catalog (index status, a listing) never
// makes the live overlay, even when its catch-up writes persisted rows;
// its first search makes it and finds what the catalog listed, and a live
// session is listed by a process that only lists, since the write that
// caught it up made the overlay.
func TestOnlySearchesAndWritesMakeTheLiveOverlay(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.persist(hdr("s1", 1_700_000_000_000), texts("deploy the staging cluster"))
	if err := f.ix.Update(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Close(); err != nil {
		t.Fatal(err)
	}

	ix := f.newIndex(f.cfg)
	st, err := ix.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 1 {
		t.Fatalf("status: %d sessions, want 1", st.Sessions)
	}
	page, err := ix.Summaries(ctx, sessionquery.SummaryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Header.ID != "s1" {
		t.Fatalf("listing: %+v, want s1", page.Items)
	}
	if _, err := ix.SummariesOf(ctx, []string{"s1"}); err != nil {
		t.Fatal(err)
	}
	if n := tempTables(t, ix); n != 0 {
		t.Fatalf("after status and listings the connection has %d temp tables, want none", n)
	}
	// Nor does a listing whose catch-up writes persisted rows (a new log).
	f.persist(hdr("s2", 1_700_000_010_000), texts("rotate the staging keys"))
	if page, err = ix.Summaries(ctx, sessionquery.SummaryRequest{}); err != nil || len(page.Items) != 2 {
		t.Fatalf("listing after a new log: %+v, %v", page.Items, err)
	}
	if n := tempTables(t, ix); n != 0 {
		t.Fatalf("after a catch-up of persisted rows the connection has %d temp tables, want none", n)
	}

	hits, err := ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "staging"})
	if err != nil {
		t.Fatal(err)
	}
	if ids := sessionIDs(hits); len(ids) != 2 {
		t.Fatalf("search after the listing: %v, want s1 and s2", ids)
	}
	if n := liveTempTables(t, ix); n == 0 {
		t.Fatal("a search left the connection without its live overlay")
	}

	f.live(hdr("l1", 1_700_000_050_000), texts("a live session"))
	lister := f.newIndex(f.cfg)
	page, err = lister.Summaries(ctx, sessionquery.SummaryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range page.Items {
		ids = append(ids, it.Header.ID)
	}
	if len(ids) != 3 || ids[0] != "l1" || ids[1] != "s2" || ids[2] != "s1" {
		t.Fatalf("listing with a live session: %v, want [l1 s2 s1]", ids)
	}
	if !page.Items[0].Live {
		t.Fatal("the live session is not listed as live")
	}
}
