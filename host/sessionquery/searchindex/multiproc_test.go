package searchindex

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// Child processes re-execute this test binary; helperEnv selects what the
// child does instead of running tests.
const helperEnv = "DSH_SEARCHINDEX_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// process is one simulated dsh process on a shared home: its own live
// registry, service and index connection over the same logs and index file.
type process struct {
	reg *session.Registry
	svc *sessionquery.Service
	ix  *Index
	st  *store.Store
}

func newProcess(t *testing.T, root, path string) *process {
	t.Helper()
	reg := session.NewRegistry()
	svc, err := sessionquery.New(sessionquery.DefaultConfig(), reg)
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(root, store.Options{})
	svc.Mount(sessionquery.NewStorePersistence(st))
	ix, err := New(DefaultConfig(path), svc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return &process{reg: reg, svc: svc, ix: ix, st: st}
}

// startSession creates a persisted session written through a live one.
func (p *process) startSession(t *testing.T, id string) *session.Live {
	t.Helper()
	w, err := p.st.Create(hdr(id, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := session.NewLive(hdr(id, 1), nil, session.LiveOptions{Sink: w})
	if err := p.reg.Attach(l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestTwoProcessesOnOneHomeFindEachOthersEvents(t *testing.T) {
	dir := t.TempDir()
	root, path := filepath.Join(dir, "sessions"), filepath.Join(dir, "session-query.db")
	a, b := newProcess(t, root, path), newProcess(t, root, path)
	la, lb := a.startSession(t, "session-a"), b.startSession(t, "session-b")
	const rounds = 15
	ctx := context.Background()
	var wg sync.WaitGroup
	run := func(self *process, l *session.Live, other *process, tag string) {
		defer wg.Done()
		for i := range rounds {
			token := fmt.Sprintf("%s%03dtoken", tag, i)
			if _, err := l.Append(session.TypeUserMessage, userMsg("message "+token)); err != nil {
				t.Error(err)
				return
			}
			if err := l.Flush(); err != nil {
				t.Error(err)
				return
			}
			// The other process finds it within one search, once.
			p, err := other.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: l.ID(), Query: token})
			if err != nil {
				t.Error(err)
				return
			}
			if len(p.Items) != 1 || p.Items[0].Seq != i {
				t.Errorf("%s: the other process found %+v", token, p.Items)
			}
			s, err := other.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "message", Limit: intp(10)})
			if err != nil {
				t.Error(err)
				return
			}
			if ids := sessionIDs(s); !distinctStrings(ids) {
				t.Errorf("duplicate sessions: %v", ids)
			}
			// And this process finds it in its live overlay.
			own, err := self.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: l.ID(), Query: token})
			if err != nil || len(own.Items) != 1 {
				t.Errorf("%s: own search %+v, %v", token, own.Items, err)
			}
		}
	}
	wg.Add(2)
	go run(a, la, b, "alpha")
	go run(b, lb, a, "bravo")
	wg.Wait()
	for _, p := range []*process{a, b} {
		s, err := p.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "message"})
		if err != nil {
			t.Fatal(err)
		}
		if got := sorted(sessionIDs(s)); !reflect.DeepEqual(got, []string{"session-a", "session-b"}) {
			t.Errorf("sessions = %v", got)
		}
	}
}

func distinctStrings(s []string) bool {
	seen := map[string]bool{}
	for _, v := range s {
		if seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

func TestIndexFileDeletedWhileRunningIsRebuilt(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if err := removeDatabase(f.cfg.Path); err != nil {
		t.Fatal(err)
	}
	f.persist(hdr("b", 2), texts("needle b"))
	if got := sorted(sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("sessions = %v", got)
	}
	if _, err := os.Stat(f.cfg.Path); err != nil {
		t.Errorf("the index was not recreated: %v", err)
	}
	want := "the session-search index " + f.cfg.Path + " was deleted; rebuilding it from the session logs"
	if got := f.takeNotices(); !reflect.DeepEqual(got, []string{want}) {
		t.Errorf("notices = %q, want %q", got, want)
	}
}

func TestIndexFileTruncatedWhileRunningIsRebuilt(t *testing.T) {
	f := newFixture(t)
	for i := range 30 {
		f.persist(hdr(fmt.Sprintf("s%02d", i), int64(i)), texts(fmt.Sprintf("needle number %d with some more words to fill pages", i)))
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	f.exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	// A search here sees the checkpointed file's size, so the truncation
	// below shrinks a file this process knows.
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	fi, err := os.Stat(f.cfg.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(f.cfg.Path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(100)})
	if len(p.Items) != 30 {
		t.Errorf("after truncation: %d sessions, want 30", len(p.Items))
	}
	want := "the session-search index " + f.cfg.Path + " was damaged (the file is shorter than its header says (truncated)); rebuilding it from the session logs"
	if got := f.takeNotices(); !reflect.DeepEqual(got, []string{want}) {
		t.Errorf("notices = %q, want %q", got, want)
	}
}

func TestIndexFileReplacedByAForeignDatabaseIsRefusedUntilRemoved(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	foreign := rawDB(t, "PRAGMA application_id = 123", "CREATE TABLE precious(x)", "INSERT INTO precious VALUES (42)")
	content, err := os.ReadFile(foreign)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(foreign, f.cfg.Path); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err = f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
		qe := wantCode(t, err, sessionquery.CodeIndexFailed)
		if want := "belongs to another application"; !strings.Contains(qe.Message, want) {
			t.Errorf("message = %q", qe.Message)
		}
	}
	// The bytes, not a SQLite read: our stale write-ahead log still sits
	// beside the replaced file, and SQLite would read it into the view.
	if got, err := os.ReadFile(f.cfg.Path); err != nil || string(got) != string(content) {
		t.Fatalf("the foreign database was changed (%v)", err)
	}
	if err := removeDatabase(f.cfg.Path); err != nil {
		t.Fatal(err)
	}
	if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("after removing it: %v", got)
	}
}

func TestCancelledBuildLeavesAUsableIndex(t *testing.T) {
	f := newFixture(t)
	for i := range 40 {
		f.persist(hdr(fmt.Sprintf("s%02d", i), int64(i)), texts(fmt.Sprintf("needle %d", i)))
	}
	if err := f.ix.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err := f.ix.Rebuild(ctx, func(done, total int) {
		if done == 10 {
			cancel()
		}
	})
	wantCode(t, err, sessionquery.CodeAborted)
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(100)})
	if len(p.Items) != 40 {
		t.Errorf("after an interrupted build: %d sessions, want 40", len(p.Items))
	}
}

func TestProcessKilledDuringABuildLeavesAnIndexTheNextOneRepairs(t *testing.T) {
	dir := t.TempDir()
	root, path := filepath.Join(dir, "sessions"), filepath.Join(dir, "session-query.db")
	st := store.New(root, store.Options{})
	const n = 120
	for i := range n {
		w, err := st.Create(hdr(fmt.Sprintf("s%03d", i), int64(i)), texts(fmt.Sprintf("needle %d %s", i, longText)))
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=build-forever", "DSH_ROOT="+root, "DSH_INDEX="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the child in the middle of its second build, once it reports
	// being half-way through.
	sc := bufio.NewScanner(out)
	halfway := 0
	for sc.Scan() {
		if sc.Text() == "halfway" {
			halfway++
			if halfway == 2 {
				break
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if halfway < 2 {
		t.Fatalf("the child never got half-way (%d)", halfway)
	}
	p := newProcess(t, root, path)
	page, err := p.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(100)})
	if err != nil {
		t.Fatal(err)
	}
	st2, err := p.ix.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 100 || st2.Sessions != n || st2.LagSessions != 0 {
		t.Errorf("after the kill: %d hits, status %+v", len(page.Items), st2)
	}
}

const longText = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua"

func runHelper(mode string) error {
	switch mode {
	case "append-then-die":
		return runAppendThenDie()
	case "write-and-exit":
		return runWriteAndExit()
	case "build-forever":
		reg := session.NewRegistry()
		svc, err := sessionquery.New(sessionquery.DefaultConfig(), reg)
		if err != nil {
			return err
		}
		svc.Mount(sessionquery.NewStorePersistence(store.New(os.Getenv("DSH_ROOT"), store.Options{})))
		ix, err := New(DefaultConfig(os.Getenv("DSH_INDEX")), svc, Options{})
		if err != nil {
			return err
		}
		for {
			err := ix.Rebuild(context.Background(), func(done, total int) {
				if done == total/2 {
					fmt.Println("halfway")
				}
			})
			if err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

func TestDamagedIndexOfOursIsRebuiltOnOpen(t *testing.T) {
	f := newFixture(t)
	for i := range 30 {
		f.persist(hdr(fmt.Sprintf("s%02d", i), int64(i)), texts(fmt.Sprintf("needle number %d with words enough to fill a few pages", i)))
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	f.ix.Close()
	fi, err := os.Stat(f.cfg.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Overwrite pages past the header with garbage, keeping the size.
	file, err := os.OpenFile(f.cfg.Path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, fi.Size()-8192)
	for i := range junk {
		junk[i] = byte(i * 7)
	}
	if _, err := file.WriteAt(junk, 4096); err != nil {
		t.Fatal(err)
	}
	file.Close()
	f.takeNotices()
	f.ix = f.newIndex(f.cfg)
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(100)})
	if len(p.Items) != 30 {
		t.Errorf("after damage: %d sessions, want 30", len(p.Items))
	}
	// One line that says what happened and what is done about it.
	got := f.takeNotices()
	prefix, suffix := "the session-search index "+f.cfg.Path+" was damaged (", "); rebuilding it from the session logs"
	if len(got) != 1 || !strings.HasPrefix(got[0], prefix) || !strings.HasSuffix(got[0], suffix) || strings.Contains(got[0], "\n") {
		t.Errorf("notices = %q, want one %q…%q", got, prefix, suffix)
	}
}
