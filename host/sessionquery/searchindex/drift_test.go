package searchindex

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// The crash protocol (package doc, "Trust and drift"): a writer's log
// write comes first, its journal record second, the index commit that
// consumes the record last. These tests stop a writer at each point.

// ageDirs makes every directory under root look an hour old, so their
// stamps are trusted (not racy) and only a later change moves them.
func ageDirs(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// journalSize returns the change journal's length.
func journalSize(t *testing.T, st *store.Store) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(st.Root(), "changes.log"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// countingProbe counts the directory scans of the drift check.
type countingProbe struct {
	*countingFeed
	scans int
}

func (c *countingProbe) WorkspaceSessions(dir string) ([]string, error) {
	c.mu.Lock()
	c.scans++
	c.mu.Unlock()
	return c.countingFeed.WorkspaceSessions(dir)
}

func TestCreateWhoseJournalRecordWasLostIsFoundThroughItsWorkspaceDirectory(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	ageDirs(t, f.st.Root())
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	f.unmount()
	probe := &countingProbe{countingFeed: feed}
	f.unmount = f.svc.Mount(probe)
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	feed.reset()
	if probe.scans != 0 {
		t.Errorf("unchanged directories were scanned %d times", probe.scans)
	}
	// Crash point 1: the log is written, its journal record is not.
	before := journalSize(t, f.st)
	f.persist(hdr("b", 2), texts("needle b"))
	if err := os.Truncate(filepath.Join(f.st.Root(), "changes.log"), before); err != nil {
		t.Fatal(err)
	}
	// A fresh process, which trusts the index up to its cursor.
	f.ix.Close()
	f.ix = f.newIndex(f.cfg)
	if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("sessions = %v", got)
	}
	if lists, _, inspects := feed.reset(); lists != 0 || !reflect.DeepEqual(inspects, []string{"b"}) {
		t.Errorf("%d listings, inspections %v; want only b inspected", lists, inspects)
	}
	if probe.scans != 1 {
		t.Errorf("%d directory scans, want the one changed directory", probe.scans)
	}
}

func TestForeignCopiedDeletedAndEditedLogsAreSeen(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	f.persist(hdr("b", 2), texts("needle b"))
	ageDirs(t, f.st.Root())
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	feed.reset()

	// Copied in from another machine: a whole workspace directory.
	other := store.New(filepath.Join(f.dir, "elsewhere"), store.Options{})
	cwd := "/elsewhere"
	w, err := other.Create(session.Header{ID: "c", CreatedAt: 3, Cwd: &cwd}, texts("needle c"))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	slug := store.WorkspaceSlug(&cwd)
	if err := exec.Command("cp", "-r", filepath.Join(other.Root(), slug), filepath.Join(f.st.Root(), slug)).Run(); err != nil {
		t.Fatal(err)
	}
	// Deleted by hand.
	f.removeLog("a")
	f.ix.Close()
	f.ix = f.newIndex(f.cfg)
	if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))); !reflect.DeepEqual(got, []string{"b", "c"}) {
		t.Errorf("after a copy and a delete: sessions = %v", got)
	}
	if lists, _, _ := feed.reset(); lists != 0 {
		t.Errorf("%d listings", lists)
	}

	// Edited in place: a line appended by hand. The bounded re-check
	// (verifyBatch logs per search) sees it on the next search here.
	entry, err := f.st.Stat(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	line := session.MustMarshal(ev(1, session.TypeAssistantMessage, assistantMsg("needle edited by hand")))
	fh, err := os.OpenFile(entry.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	p := f.events(sessionquery.EventSearchRequest{SessionID: "b", Query: "edited"})
	if len(p.Items) != 1 {
		t.Errorf("the hand edit was not found: %+v", p.Items)
	}

	// A log deleted from a session directory that stays (seen by the
	// bounded re-check, as an edit is), and beside it a session directory
	// with no log yet, which changes the workspace directory's stamp and
	// is looked up and found empty: nothing is indexed for it and nothing
	// fails.
	if err := os.Remove(entry.Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(filepath.Dir(filepath.Dir(entry.Path)), "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))); !reflect.DeepEqual(got, []string{"c"}) {
		t.Errorf("after b's log was deleted from its directory and d's made: sessions = %v", got)
	}
}

func TestAnotherBootListsEverythingOnce(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	f.exec(`UPDATE search_state SET feed_boot = 'another boot'`)
	feed.reset()
	f.ix.Close()
	f.ix = f.newIndex(f.cfg)
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if lists, _, _ := feed.reset(); lists != 1 {
		t.Errorf("after a reboot: %d listings, want 1", lists)
	}
	f.ix.Close()
	f.ix = f.newIndex(f.cfg)
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if lists, _, _ := feed.reset(); lists != 0 {
		t.Errorf("the next process: %d listings, want 0", lists)
	}
}

// A writer that dies after an append, before the journal record of its
// flush (crash point 2), in a real child process.
func TestWriterThatDiesBeforeJournalingItsAppendIsSeen(t *testing.T) {
	f, _ := newFeedFixture(t)
	f.persist(hdr("w", 1), texts("needle before"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=append-then-die", "DSH_ROOT="+f.st.Root(), "DSH_ID=w")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "opened" {
		t.Fatalf("the child did not open the log: %q", sc.Text())
	}
	// The index follows the writer's announcement while it runs.
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if n := f.count(`SELECT count(*) FROM open_writers WHERE session_id = 'w'`); n != 1 {
		t.Fatalf("the running writer is not watched (%d)", n)
	}
	stdin.Close() // the child appends and exits without flushing
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	// A fresh process sees the unjournaled append.
	f.ix.Close()
	f.ix = f.newIndex(f.cfg)
	p := f.events(sessionquery.EventSearchRequest{SessionID: "w", Query: "crashed"})
	if len(p.Items) != 1 {
		t.Errorf("the dead writer's append was not found: %+v", p.Items)
	}
	if n := f.count(`SELECT count(*) FROM open_writers`); n != 0 {
		t.Errorf("%d writers still watched", n)
	}
}

// runAppendThenDie opens a log, reports it, waits for stdin to close,
// appends one event and exits without flushing or closing: a crash right
// after the append.
func runAppendThenDie() error {
	st := store.New(os.Getenv("DSH_ROOT"), store.Options{})
	w, _, events, err := st.Open(context.Background(), os.Getenv("DSH_ID"))
	if err != nil {
		return err
	}
	os.Stdout.WriteString("opened\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if err := w.Append(ev(len(events), session.TypeAssistantMessage, assistantMsg("needle crashed"))); err != nil {
		return err
	}
	os.Exit(0)
	return nil
}

func TestSchemaMigrationIsAnnouncedAndRebuilds(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	f.exec(`PRAGMA user_version = 1`)
	f.ix.Close()
	var notices []string
	ix, err := New(f.cfg, f.svc, Options{Notice: func(m string) { notices = append(notices, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	p, err := ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("after the migration: %+v, %v", p, err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "built by another dsh version") {
		t.Errorf("notices = %q", notices)
	}
}

// Rebuild builds beside the old index: another process searching during
// the build sees the old index whole, and afterwards the new one.
func TestRebuildKeepsTheOldIndexUntilTheNewOneIsComplete(t *testing.T) {
	f := newFixture(t)
	for i, id := range []string{"a", "b", "c"} {
		f.persist(hdr(id, int64(i)), texts("needle "+id))
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	other := f.newIndex(f.cfg)
	during := 0
	err := f.ix.Rebuild(context.Background(), func(done, total int) {
		p, err := other.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
		if err != nil {
			t.Errorf("a search during the rebuild: %v", err)
			return
		}
		during = max(during, len(p.Items))
		if len(p.Items) != 3 {
			t.Errorf("a search during the rebuild (%d/%d) found %v", done, total, sessionIDs(p))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != 3 {
		t.Errorf("no search ran during the rebuild (%d)", during)
	}
	f.persist(hdr("d", 4), texts("needle d"))
	for _, ix := range []*Index{f.ix, other} {
		p, err := ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
		if err != nil || len(p.Items) != 4 {
			t.Errorf("after the rebuild: %v, %v", sessionIDs(p), err)
		}
	}
	if left, _ := filepath.Glob(f.cfg.Path + ".rebuild-*"); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// failingFeed fails the next Inspect of one session: a reader that dies
// after reading the journal, before it commits what it read.
type failingFeed struct {
	*countingFeed
	fail string
}

func (f *failingFeed) failNext(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = id
}

func (f *failingFeed) Inspect(ctx context.Context, id string) (session.Header, []session.Event, error) {
	f.mu.Lock()
	fail := id == f.fail
	if fail {
		f.fail = ""
	}
	f.mu.Unlock()
	if fail {
		return session.Header{}, nil, errors.New("the reader died here")
	}
	return f.countingFeed.Inspect(ctx, id)
}

func (f *failingFeed) InspectExtent(ctx context.Context, id string) (session.Header, []session.Event, store.Extent, error) {
	if _, _, err := f.Inspect(ctx, id); err != nil {
		return session.Header{}, nil, store.Extent{}, err
	}
	return f.countingFeed.InspectExtent(ctx, id)
}

// ReadAppended fails for the armed id without disarming it, so the whole
// read it falls back to dies too.
func (f *failingFeed) ReadAppended(ctx context.Context, id string, from store.Extent) ([]session.Event, store.Extent, error) {
	f.mu.Lock()
	fail := id == f.fail
	f.mu.Unlock()
	if fail {
		return nil, store.Extent{}, errors.New("the reader died here")
	}
	return f.countingFeed.ReadAppended(ctx, id, from)
}

// Crash point 3: a reader that read a journal record but did not commit
// consumed nothing; the next reader, in a fresh process, applies it.
func TestReaderThatDiesBeforeItsCommitLeavesTheRecordToTheNext(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.unmount()
	failing := &failingFeed{countingFeed: feed}
	f.unmount = f.svc.Mount(failing)
	f.persist(hdr("a", 1), texts("needle a"))
	f.persist(hdr("b", 2), texts("needle b"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	cursor := f.count(`SELECT feed_cursor FROM search_state WHERE singleton = 1`)
	events := f.count(`SELECT count(*) FROM persisted_docs`)

	f.appendFlushed("b", "needle appended")
	failing.failNext("b")
	feed.reset()
	_, err := f.ix.SearchEvents(context.Background(), sessionquery.EventSearchRequest{SessionID: "b", Query: "appended"})
	wantCode(t, err, sessionquery.CodePersistenceFailed)
	if got := f.count(`SELECT feed_cursor FROM search_state WHERE singleton = 1`); got != cursor {
		t.Errorf("the failed reader moved the cursor from %d to %d", cursor, got)
	}
	if got := f.count(`SELECT count(*) FROM persisted_docs`); got != events {
		t.Errorf("the failed reader committed rows: %d events, was %d", got, events)
	}

	f.ix.Close()
	f.ix = f.newIndex(f.cfg)
	feed.reset()
	p := f.events(sessionquery.EventSearchRequest{SessionID: "b", Query: "appended"})
	if len(p.Items) != 1 {
		t.Errorf("the next reader did not find the append: %+v", p.Items)
	}
	if lists, _, inspects := feed.reset(); lists != 0 || len(inspects) != 0 {
		t.Errorf("the next reader: %d listings, inspections %v; want none", lists, inspects)
	}
	if got := feed.takeAppended(); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("the next reader read appended events of %v, want only b's", got)
	}
}

// Another dsh process creates a session and appends to one, then exits;
// a fresh process finds both through the journal, reading only those two
// logs.
func TestAFreshProcessSeesAnotherProcesssWrites(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	f.persist(hdr("b", 2), texts("needle b"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	before := f.docIDs("a")
	f.ix.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=write-and-exit", "DSH_ROOT="+f.st.Root())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the writer: %v\n%s", err, out)
	}

	f.ix = f.newIndex(f.cfg)
	feed.reset()
	if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "written"}))); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("the fresh process found %v, want the appended a and the new c", got)
	}
	// The new log is read whole, the appended one only from where the
	// index had read it: a's documents keep their rowids and one joins.
	if lists, _, inspects := feed.reset(); lists != 0 || !reflect.DeepEqual(inspects, []string{"c"}) {
		t.Errorf("%d listings, inspections %v; want only c read whole", lists, inspects)
	}
	if got := feed.takeAppended(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("appended reads %v, want only a's", got)
	}
	after := f.docIDs("a")
	for seq, id := range before {
		if after[seq] != id {
			t.Errorf("a's seq %d moved from rowid %d to %d", seq, id, after[seq])
		}
	}
	if len(after) != len(before)+1 {
		t.Errorf("a has %d documents, want %d", len(after), len(before)+1)
	}
	f.checkFTS()
}

// runWriteAndExit is another dsh process: it appends to session a, creates
// session c, flushes and closes both, and exits.
func runWriteAndExit() error {
	st := store.New(os.Getenv("DSH_ROOT"), store.Options{})
	w, _, events, err := st.Open(context.Background(), "a")
	if err != nil {
		return err
	}
	err = w.Append(ev(len(events), session.TypeAssistantMessage, assistantMsg("needle written by another process")))
	if err == nil {
		err = w.Flush()
	}
	if err = errors.Join(err, w.Close()); err != nil {
		return err
	}
	c, err := st.Create(hdr("c", 3), texts("needle written into a new session"))
	if err != nil {
		return err
	}
	return c.Close()
}

// TestARebuildThatShrinksTheFileKeepsOtherReadersWorking: a rebuild after
// most logs were deleted copies a much smaller index over the file, and
// SQLite shrinks it. Another index on the same file, which searched the
// larger one before, must go on searching and see the smaller index (were
// the file memory-mapped, a read past the new end of a stale map would
// kill the process with SIGBUS).
func TestARebuildThatShrinksTheFileKeepsOtherReadersWorking(t *testing.T) {
	f := newFixture(t)
	const n = 120
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 400)
	for i := range n {
		id := fmt.Sprintf("s%03d", i)
		f.persist(hdr(id, int64(i)), texts("needle "+id+" "+filler, filler+" "+id))
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	f.exec(`PRAGMA wal_checkpoint(TRUNCATE)`) // the pages in the file, where they are mapped
	other := f.newIndex(f.cfg)
	if p, err := other.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"}); err != nil || len(p.Items) == 0 {
		t.Fatalf("before: %v, %v", sessionIDs(p), err)
	}
	before, err := os.Stat(f.cfg.Path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 2; i < n; i++ {
		f.removeLog(fmt.Sprintf("s%03d", i))
	}
	if err := f.ix.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(f.cfg.Path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() >= before.Size()/2 {
		t.Fatalf("the rebuild did not shrink the file (%d → %d bytes): the test needs it to", before.Size(), after.Size())
	}
	for _, ix := range []*Index{other, f.ix} {
		p, err := ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
		if got := sorted(sessionIDs(p)); err != nil || !reflect.DeepEqual(got, []string{"s000", "s001"}) {
			t.Errorf("after the rebuild: %v, %v", got, err)
		}
	}
}

// TestNewFilesTakeTheNewPageSizeAndRebuildsKeepTheirs: a new index file
// gets newPageSize; one made with another page size (an index made by an
// earlier dsh, with 8 KiB pages) is rebuilt with its own, as the copy into
// a WAL file requires. Either way the write-ahead log is checkpointed
// every walBytes.
func TestNewFilesTakeTheNewPageSizeAndRebuildsKeepTheirs(t *testing.T) {
	for _, size := range []int{0, 8192} {
		f := newFixture(t, func(c *Config) { c.pageSize = size })
		f.persist(hdr("a", 1), texts("needle a"))
		f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
		want := size
		if want == 0 {
			want = newPageSize
		}
		if got := filePageSize(f.cfg.Path); got != want {
			t.Fatalf("page size %d, want %d", got, want)
		}
		if got := f.count(`PRAGMA wal_autocheckpoint`); got != walBytes/want {
			t.Errorf("checkpoints every %d pages of %d bytes, want %d", got, want, walBytes/want)
		}
		// This dsh opens the file (made by an earlier one, when size is
		// not 0) with its own defaults.
		f.ix.Close()
		f.cfg.pageSize = 0
		f.ix = f.newIndex(f.cfg)
		f.persist(hdr("b", 2), texts("needle b"))
		if err := f.ix.Rebuild(context.Background(), nil); err != nil {
			t.Fatalf("rebuild of a %d-byte-page file: %v", want, err)
		}
		if got := filePageSize(f.cfg.Path); got != want {
			t.Errorf("after the rebuild: page size %d, want %d", got, want)
		}
		if got := f.count(`PRAGMA wal_autocheckpoint`); got != walBytes/want {
			t.Errorf("after the rebuild: checkpoints every %d pages of %d bytes, want %d", got, want, walBytes/want)
		}
		if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))); !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Errorf("after the rebuild: %v", got)
		}
	}
}

// TestARebuildCopiesNoFreePages: the rebuild's file merges its FTS5
// segments into one (finishBuild), which frees the pages of the others;
// they are given back before the copy, so the index is no larger than
// what it holds (on the tiny preset, 55 MiB of 647).
func TestARebuildCopiesNoFreePages(t *testing.T) {
	f := newFixture(t)
	// More documents than one of the rebuild's batches (batchDocs): each
	// batch leaves an FTS5 segment.
	msgs := make([]string, 30)
	for i := range 600 {
		for k := range msgs {
			msgs[k] = fmt.Sprintf("needle%d word%d lorem ipsum", i, k)
		}
		f.persist(hdr(fmt.Sprintf("s%03d", i), int64(i)), texts(msgs...))
	}
	if err := f.ix.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := f.count(`PRAGMA freelist_count`); n != 0 {
		t.Errorf("%d free pages after a rebuild", n)
	}
	if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle123"})); !reflect.DeepEqual(got, []string{"s123"}) {
		t.Errorf("after the rebuild: %v", got)
	}
}
