package searchindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// countingFeed is the store persistence with its calls counted.
type countingFeed struct {
	*sessionquery.StorePersistence
	mu               sync.Mutex
	lists, snapshots int
	inspects         []string
	appended         []string // ids read with ReadAppended
	appendedEvents   int      // events those reads returned
}

func (c *countingFeed) List(ctx context.Context) ([]sessionquery.PersistedSnapshot, error) {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.StorePersistence.List(ctx)
}

func (c *countingFeed) Snapshot(ctx context.Context, id string) (sessionquery.PersistedSnapshot, bool, error) {
	c.mu.Lock()
	c.snapshots++
	c.mu.Unlock()
	return c.StorePersistence.Snapshot(ctx, id)
}

func (c *countingFeed) Inspect(ctx context.Context, id string) (session.Header, []session.Event, error) {
	c.mu.Lock()
	c.inspects = append(c.inspects, id)
	c.mu.Unlock()
	return c.StorePersistence.Inspect(ctx, id)
}

func (c *countingFeed) InspectExtent(ctx context.Context, id string) (session.Header, []session.Event, store.Extent, error) {
	c.mu.Lock()
	c.inspects = append(c.inspects, id)
	c.mu.Unlock()
	return c.StorePersistence.InspectExtent(ctx, id)
}

func (c *countingFeed) ReadAppended(ctx context.Context, id string, from store.Extent) ([]session.Event, store.Extent, error) {
	c.mu.Lock()
	c.appended = append(c.appended, id)
	c.mu.Unlock()
	events, x, err := c.StorePersistence.ReadAppended(ctx, id, from)
	c.mu.Lock()
	c.appendedEvents += len(events)
	c.mu.Unlock()
	return events, x, err
}

// takeAppendedEvents returns and forgets how many events ReadAppended
// returned.
func (c *countingFeed) takeAppendedEvents() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.appendedEvents
	c.appendedEvents = 0
	return n
}

// takeAppended returns and forgets the ids read with ReadAppended.
func (c *countingFeed) takeAppended() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := c.appended
	c.appended = nil
	return ids
}

func (c *countingFeed) reset() (lists, snapshots int, inspects []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lists, snapshots, inspects = c.lists, c.snapshots, c.inspects
	c.lists, c.snapshots, c.inspects = 0, 0, nil
	return
}

func newFeedFixture(t *testing.T) (*fixture, *countingFeed) {
	t.Helper()
	f := newFixture(t)
	f.unmount()
	feed := &countingFeed{StorePersistence: sessionquery.NewStorePersistence(f.st)}
	f.unmount = f.svc.Mount(feed)
	return f, feed
}

// appendFlushed appends events to a stored session through a writer and
// flushes them, which journals the change.
func (f *fixture) appendFlushed(id string, texts ...string) {
	f.t.Helper()
	w, _, events, err := f.st.Open(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	defer w.Close()
	for i, text := range texts {
		e := ev(len(events)+i, session.TypeUserMessage, userMsg(text))
		if err := w.Append(e); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		f.t.Fatal(err)
	}
}

func TestFeedListsOnceThenEveryProcessFollowsTheJournal(t *testing.T) {
	f, feed := newFeedFixture(t)
	for _, id := range []string{"a", "b", "c"} {
		f.persist(hdr(id, 1), texts("needle "+id))
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	lists, _, inspects := feed.reset()
	if lists != 1 || len(inspects) != 3 {
		t.Fatalf("first search: %d listings, inspections %v", lists, inspects)
	}
	// Another process opening the same index trusts it up to the stored
	// cursor: it neither lists nor inspects anything.
	other := f.newIndex(f.cfg)
	if _, err := other.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"}); err != nil {
		t.Fatal(err)
	}
	if lists, _, inspects := feed.reset(); lists != 0 || len(inspects) != 0 {
		t.Errorf("reopening: %d listings, inspections %v", lists, inspects)
	}
	other.Close()
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if lists, snaps, inspects := feed.reset(); lists+snaps+len(inspects) != 0 {
		t.Errorf("an unchanged corpus cost %d listings, %d stats, %v inspections", lists, snaps, inspects)
	}
	f.appendFlushed("b", "needle appended")
	p := f.events(sessionquery.EventSearchRequest{SessionID: "b", Query: "appended"})
	if len(p.Items) != 1 {
		t.Errorf("the appended event was not found: %+v", p.Items)
	}
	// Only what was appended is read.
	if lists, _, inspects := feed.reset(); lists != 0 || len(inspects) != 0 {
		t.Errorf("after an append: %d listings, inspections %v", lists, inspects)
	}
	if got := feed.takeAppended(); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("after an append: appended reads %v, want [b]", got)
	}
}

func TestFeedFallsBackToAListingWhenTheJournalResets(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	feed.reset()
	if err := os.Remove(filepath.Join(f.st.Root(), "changes.log")); err != nil {
		t.Fatal(err)
	}
	f.persist(hdr("b", 2), texts("needle b"))
	if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("sessions = %v", got)
	}
	lists, _, inspects := feed.reset()
	if lists != 1 || !reflect.DeepEqual(inspects, []string{"b"}) {
		t.Errorf("after a reset: %d listings, inspections %v (want one listing and only b)", lists, inspects)
	}
}

func TestFeedDeletesVanishedLogs(t *testing.T) {
	f, _ := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	f.persist(hdr("b", 2), texts("needle b"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	f.removeLog("a")
	// Deleting a log writes no journal record: its workspace directory's
	// changed stamp tells the next process, which drops its rows.
	f.ix.Close()
	f.ix = f.newIndex(f.cfg)
	if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("sessions = %v", got)
	}
}

func TestLiveSessionOnTheFeedIsParkedAndIndexedAfterItDetaches(t *testing.T) {
	f, feed := newFeedFixture(t)
	w, err := f.st.Create(hdr("x", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := session.NewLive(hdr("x", 1), nil, session.LiveOptions{Sink: w})
	if err := f.reg.Attach(l); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(session.TypeUserMessage, userMsg("needle live")); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if len(p.Items) != 1 || !p.Items[0].Live || !p.Items[0].Persisted {
		t.Fatalf("hits = %+v", p.Items)
	}
	if _, _, inspects := feed.reset(); len(inspects) != 0 {
		t.Errorf("a live session was inspected: %v", inspects)
	}
	if n := f.count(`SELECT count(*) FROM pending_sessions WHERE session_id = 'x'`); n != 1 {
		t.Errorf("x is not parked as pending (%d)", n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f.reg.Detach(l)
	p = f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if len(p.Items) != 1 || p.Items[0].Live || !p.Items[0].Persisted {
		t.Errorf("after detaching: %+v", p.Items)
	}
	if _, _, inspects := feed.reset(); !reflect.DeepEqual(inspects, []string{"x"}) {
		t.Errorf("inspections after detaching = %v, want [x]", inspects)
	}
	if n := f.count(`SELECT count(*) FROM pending_sessions`); n != 0 {
		t.Errorf("%d sessions still pending", n)
	}
}

func TestStatusReportsSizeCountsAndLag(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("a", 1), texts("needle a", "reply"))
	f.persist(hdr("b", 2), texts("needle b"))
	ctx := context.Background()
	st, err := f.ix.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 0 || st.LagSessions != 2 || st.Path != f.cfg.Path {
		t.Errorf("before indexing: %+v", st)
	}
	if err := f.ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	st, err = f.ix.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 2 || st.Events != 3 || st.LagSessions != 0 || st.SizeBytes <= 0 {
		t.Errorf("after indexing: %+v", st)
	}
	f.appendFlushed("a", "more")
	f.persist(hdr("c", 3), texts("new"))
	if st, _ = f.ix.Status(ctx); st.LagSessions != 2 {
		t.Errorf("lag = %d, want 2", st.LagSessions)
	}
	counts, err := f.ix.EventCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(counts, map[string]int{"a": 3, "b": 1, "c": 1}) {
		t.Errorf("counts = %v", counts)
	}
}

func TestRebuildReportsProgressAndStartsOver(t *testing.T) {
	f := newFixture(t)
	for i, id := range []string{"a", "b", "c", "d"} {
		f.persist(hdr(id, int64(i)), texts("needle "+id))
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	var last, total int
	calls := 0
	err := f.ix.Rebuild(context.Background(), func(done, n int) {
		calls++
		if done < last {
			t.Errorf("progress went backwards: %d after %d", done, last)
		}
		last, total = done, n
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != 4 || total != 4 {
		t.Errorf("progress: %d calls, last %d of %d", calls, last, total)
	}
	if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))); len(got) != 4 {
		t.Errorf("after rebuild: %v", got)
	}
}

// A bulk load into an index that already holds sessions: a full listing
// (here Verify's) that finds bulkSessions logs to index. An index found
// empty is filled beside it instead (see the next test).
func TestBulkLoadRestoresTheMergePolicy(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("first", 1000), texts("needle first"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	for i := range bulkSessions + 5 {
		f.persist(hdr(fmt.Sprintf("s%03d", i), int64(i)), texts(fmt.Sprintf("needle %d", i)))
	}
	if rep, err := f.ix.Verify(context.Background(), nil); err != nil || len(rep.Added) != bulkSessions+5 {
		t.Fatalf("verify: %d added, %v", len(rep.Added), err)
	}
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(100)})
	if len(p.Items) != 100 || p.NextCursor == nil {
		t.Errorf("%d hits", len(p.Items))
	}
	if n := f.count(`SELECT v FROM persisted_fts_config WHERE k = 'automerge'`); n != 4 {
		t.Errorf("automerge = %d after a bulk load, want 4", n)
	}
	if n := f.count(`PRAGMA auto_vacuum`); n != 0 {
		t.Errorf("auto_vacuum = %d: the index was filled beside it, not loaded in bulk", n)
	}
}

// An index a process finds empty, with a bulk load of logs to index, is
// filled as a rebuild fills its new file and copied in: its FTS5 index is
// one segment, no page is free, the file carries the private file's
// incremental auto-vacuum, and nothing of the build is left beside it.
// The process's live session, and another process on the same file, see
// everything.
func TestAnIndexFoundEmptyIsFilledBesideIt(t *testing.T) {
	f := newFixture(t)
	n := bulkSessions + 5
	for i := range n {
		f.persist(hdr(fmt.Sprintf("s%03d", i), int64(i)), texts(fmt.Sprintf("needle %d", i)))
	}
	f.live(hdr("live", int64(n)), texts("needle live"))
	last, total := 0, 0
	// Under OneLook, as dsh sessions search updates the index.
	if err := f.ix.Update(OneLook(context.Background()), func(done, all int) { last, total = done, all }); err != nil {
		t.Fatal(err)
	}
	if last != n || total != n {
		t.Errorf("progress ended at %d of %d, want %d of %d", last, total, n, n)
	}
	if got := f.ftsSegments(); got != 1 {
		t.Errorf("%d FTS5 segments, want the one a rebuild merges into", got)
	}
	if got := f.count(`PRAGMA freelist_count`); got != 0 {
		t.Errorf("%d free pages", got)
	}
	if got := f.count(`PRAGMA auto_vacuum`); got != 2 {
		t.Errorf("auto_vacuum = %d, want 2 (incremental, the built file's)", got)
	}
	if got := f.count(`SELECT v FROM persisted_fts_config WHERE k = 'automerge'`); got != ftsAutomerge {
		t.Errorf("automerge = %d, want %d", got, ftsAutomerge)
	}
	if left, _ := filepath.Glob(f.cfg.Path + ".rebuild-*"); len(left) != 0 {
		t.Errorf("left beside the index: %v", left)
	}
	if got := f.sessions(sessionquery.SessionSearchRequest{Query: "needle live"}); len(got.Items) != 1 || got.Items[0].Header.ID != "live" {
		t.Errorf("the live session after the fill: %v", sessionIDs(got))
	}
	other := f.newIndex(f.cfg)
	p, err := other.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(100)})
	if err != nil || len(p.Items) != 100 || p.NextCursor == nil {
		t.Fatalf("another process: %d hits, %v", len(p.Items), err)
	}
	if st, err := other.Status(context.Background()); err != nil || st.Sessions != n {
		t.Errorf("another process's status: %+v, %v", st, err)
	}
}

// A rebuild's private file runs with its own FTS5 policy and no journal;
// the index it is copied into gets the defaults and its journal mode.
func TestRebuildRestoresTheDefaultPolicy(t *testing.T) {
	f := newFixture(t)
	for i := range bulkSessions + 5 {
		f.persist(hdr(fmt.Sprintf("s%03d", i), int64(i)), texts(fmt.Sprintf("needle %d", i)))
	}
	if err := f.ix.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := f.count(`SELECT v FROM persisted_fts_config WHERE k = 'automerge'`); n != ftsAutomerge {
		t.Errorf("automerge = %d after a rebuild, want %d", n, ftsAutomerge)
	}
	if n := f.count(`SELECT v FROM persisted_fts_config WHERE k = 'hashsize'`); n != ftsHashBytes {
		t.Errorf("hashsize = %d after a rebuild, want %d", n, ftsHashBytes)
	}
	if n := f.count(`SELECT v FROM persisted_fts_config WHERE k = 'crisismerge'`); n != ftsCrisisMerge {
		t.Errorf("crisismerge = %d after a rebuild, want %d", n, ftsCrisisMerge)
	}
	var mode string
	if err := f.ix.begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := f.ix.db.conn.QueryRowContext(context.Background(), `PRAGMA journal_mode`).Scan(&mode)
	f.ix.queue.release()
	if err != nil || mode != f.ix.cfg.JournalMode {
		t.Errorf("journal mode %q (%v), want %q", mode, err, f.ix.cfg.JournalMode)
	}
	if got := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(100)}); len(got.Items) != 100 {
		t.Errorf("%d hits after a rebuild", len(got.Items))
	}
}
