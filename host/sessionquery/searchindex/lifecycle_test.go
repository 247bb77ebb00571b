package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

func TestConfigDefaultsAndValidation(t *testing.T) {
	c := DefaultConfig("/tmp/x.db")
	if c.OpenAt != OpenAtStartup || c.JournalMode != "wal" || c.DefaultLimit != 20 || c.MaxLimit != 100 || c.SnippetChars != 240 {
		t.Errorf("defaults = %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
	tests := []struct {
		name string
		mod  func(*Config)
		msg  string
	}{
		{"blank path", func(c *Config) { c.Path = " " }, "path must not be blank"},
		{"relative path", func(c *Config) { c.Path = "rel.db" }, `path must be absolute or ":memory:"`},
		{"later", func(c *Config) { c.OpenAt = "later" }, "openAt is not supported"},
		{"memory journal", func(c *Config) { c.JournalMode = "memory" }, "journalMode is not supported"},
		{"default 0", func(c *Config) { c.DefaultLimit = 0 }, "defaultLimit must be an integer between 1 and 9007199254740990"},
		{"max 0", func(c *Config) { c.MaxLimit = 0 }, "maxLimit must be an integer between 1 and 9007199254740990"},
		{"max huge", func(c *Config) { c.MaxLimit = 1 << 60 }, "maxLimit must be an integer between 1 and 9007199254740990"},
		{"snippet 0", func(c *Config) { c.SnippetChars = 0 }, "snippetChars must be a positive integer"},
		{"default above max", func(c *Config) { c.DefaultLimit = 101 }, "defaultLimit must be less than or equal to maxLimit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig("/tmp/x.db")
			tt.mod(&c)
			qe := wantCode(t, c.Validate(), sessionquery.CodeInvalidConfig)
			if want := "session-search SQLite config: " + tt.msg; qe.Message != want {
				t.Errorf("message = %q, want %q", qe.Message, want)
			}
		})
	}
	for _, mode := range []string{OpenAtFirstSearch, OpenAtNever} {
		c := DefaultConfig(MemoryPath)
		c.OpenAt = mode
		if err := c.Validate(); err != nil {
			t.Errorf("openAt %s: %v", mode, err)
		}
	}
}

func TestMountRejectsInvalidConfigAndRegistersNothing(t *testing.T) {
	svc, _ := sessionquery.New(sessionquery.DefaultConfig(), session.NewRegistry())
	c := DefaultConfig(MemoryPath)
	c.SnippetChars = 0
	ix, _, err := Mount(context.Background(), svc, c, Options{})
	wantCode(t, err, sessionquery.CodeInvalidConfig)
	if ix != nil {
		t.Error("an index was returned")
	}
	_, err = svc.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "x"})
	wantCode(t, err, sessionquery.CodeSearchDisabled)
}

func TestFirstSearchModeCreatesNoFileUntilSearched(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "deep", "index.db")
	c := DefaultConfig(path)
	c.OpenAt = OpenAtFirstSearch
	_, dispose, err := Mount(context.Background(), f.svc, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("mount created %s (%v)", filepath.Dir(path), err)
	}
	if err := dispose(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dispose created %s (%v)", filepath.Dir(path), err)
	}
}

func TestNeverModeDisablesSearchButNotExactReads(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("p", 1), texts("needle"))
	path := filepath.Join(t.TempDir(), "index.db")
	c := DefaultConfig(path)
	c.OpenAt = OpenAtNever
	ix, dispose, err := Mount(context.Background(), f.svc, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ix != nil {
		t.Error("never mode returned an index")
	}
	defer dispose()
	ctx := context.Background()
	_, err = f.svc.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
	qe := wantCode(t, err, sessionquery.CodeSearchDisabled)
	if qe.Message != `session search is disabled: this deployment configures the session-query index with openAt "never"` {
		t.Errorf("message = %q", qe.Message)
	}
	_, err = f.svc.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "p", Query: ""})
	wantCode(t, err, sessionquery.CodeSearchDisabled)
	if recs, err := f.svc.ListSessions(ctx); err != nil || len(recs) != 1 {
		t.Errorf("ListSessions = %v, %v", recs, err)
	}
	if _, err := f.svc.TraceSession(ctx, "p"); err != nil {
		t.Errorf("TraceSession: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("never mode touched %s", path)
	}
}

func TestFirstSearchOpensExactlyOnce(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.OpenAt = OpenAtFirstSearch })
	f.live(hdr("s", 1), texts("needle"))
	for range 3 {
		f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	}
	if n := f.ix.opens.Load(); n != 1 {
		t.Errorf("sequential searches opened %d times", n)
	}
	ix := f.newIndex(f.cfg)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := ix.opens.Load(); n != 1 {
		t.Errorf("concurrent first searches opened %d times", n)
	}
}

func TestFileModes(t *testing.T) {
	ctx := context.Background()
	t.Run("new file and sidecars are private", func(t *testing.T) {
		parent := filepath.Join(t.TempDir(), "shared")
		if err := os.Mkdir(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(parent, "new", "index.db")
		f := newFixture(t, func(c *Config) { c.Path = path })
		f.live(hdr("s", 1), texts("needle"))
		f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
		wantMode(t, parent, 0o755)
		wantMode(t, filepath.Dir(path), 0o700)
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			wantMode(t, p, 0o600)
		}
	})
	t.Run("persist journal is private", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "index.db")
		f := newFixture(t, func(c *Config) { c.Path = path; c.JournalMode = "persist" })
		f.persist(hdr("s", 1), texts("needle"))
		f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
		wantMode(t, path, 0o600)
		wantMode(t, path+"-journal", 0o600)
	})
	t.Run("existing file keeps its mode", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "index.db")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, func(c *Config) { c.Path = path })
		if err := f.ix.Open(ctx); err != nil {
			t.Fatal(err)
		}
		wantMode(t, path, 0o644)
	})
}

func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %o, want %o", filepath.Base(path), got, want)
	}
}

func TestFilesystemErrorsAreIndexFailedWithTheirCause(t *testing.T) {
	f := newFixture(t)
	c := DefaultConfig(filepath.Join(t.TempDir(), "bad\x00name.db"))
	_, _, err := Mount(context.Background(), f.svc, c, Options{})
	qe := wantCode(t, err, sessionquery.CodeIndexFailed)
	var pe *fs.PathError
	if !errors.As(qe, &pe) {
		t.Errorf("cause = %v, want the path error", qe.Cause)
	}
}

// rawDB creates a SQLite file with the given setup statements.
func rawDB(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// inspectDB reads a file's application id, user version, journal mode and
// tables without changing it.
func inspectDB(t *testing.T, path string) (appID, version int, mode string, tables []string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.QueryRow(`PRAGMA application_id`).Scan(&appID)
	db.QueryRow(`PRAGMA user_version`).Scan(&version)
	db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	return appID, version, mode, tables
}

func TestForeignOrUnrecognizedDatabasesAreRefusedUntouched(t *testing.T) {
	ours := fmt.Sprintf("PRAGMA application_id = %d", applicationID)
	tests := []struct {
		name  string
		stmts []string
		msg   string
	}{
		{"unknown table at a foreign version", []string{ours, "PRAGMA user_version = 7", "CREATE TABLE canonical(x)"}, "has unrecognized user tables: canonical"},
		{"unknown table at the current version", []string{ours, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion), "CREATE TABLE search_state(x)", "CREATE TABLE extra(x)"}, "has unrecognized user tables: extra"},
		{"application 0 with a table", []string{"CREATE TABLE canonical(x)"}, "is not an empty or recognized derived index"},
		{"application 0 with sqliteX", []string{"CREATE TABLE sqliteX(x)"}, "is not an empty or recognized derived index"},
		{"another application", []string{"PRAGMA application_id = 123", "CREATE TABLE t(x)"}, "belongs to another application"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := rawDB(t, tt.stmts...)
			appID, version, mode, tables := inspectDB(t, path)
			f := newFixture(t, func(c *Config) { c.Path = path })
			err := f.ix.Open(context.Background())
			qe := wantCode(t, err, sessionquery.CodeIndexFailed)
			want := `session-search SQLite index failed to open: session-search database at "` + path + `" ` + tt.msg
			if qe.Message != want {
				t.Errorf("message = %q\nwant      %q", qe.Message, want)
			}
			a2, v2, m2, t2 := inspectDB(t, path)
			if a2 != appID || v2 != version || m2 != mode || !slicesEqual(t2, tables) {
				t.Errorf("file changed: %d %d %s %v -> %d %d %s %v", appID, version, mode, tables, a2, v2, m2, t2)
			}
		})
	}
	t.Run("not a database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "index.db")
		content := []byte("these are somebody's notes, not a database at all\n" + string(make([]byte, 200)))
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, func(c *Config) { c.Path = path })
		wantCode(t, f.ix.Open(context.Background()), sessionquery.CodeIndexFailed)
		if got, _ := os.ReadFile(path); string(got) != string(content) {
			t.Error("the file was changed")
		}
	})
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestStaleSchemaVersionIsResetAndRebuilt(t *testing.T) {
	path := rawDB(t,
		fmt.Sprintf("PRAGMA application_id = %d", applicationID), "PRAGMA user_version = 0",
		"CREATE TABLE persisted_sessions(id TEXT, junk INTEGER)",
		"CREATE VIRTUAL TABLE persisted_fts USING fts5(body, content='')")
	f := newFixture(t, func(c *Config) { c.Path = path })
	f.persist(hdr("p", 1), texts("needle"))
	if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); len(got) != 1 {
		t.Fatalf("sessions = %v", got)
	}
	f.ix.Close()
	appID, version, mode, _ := inspectDB(t, path)
	if appID != applicationID || version != schemaVersion || mode != "wal" {
		t.Errorf("after reset: app %x version %d mode %s", appID, version, mode)
	}
}

func TestInvalidDatabaseFailsStartupAndFirstSearchForGood(t *testing.T) {
	path := rawDB(t, "CREATE TABLE canonical(x)")
	f := newFixture(t)
	c := DefaultConfig(path)
	ix, _, err := Mount(context.Background(), f.svc, c, Options{})
	wantCode(t, err, sessionquery.CodeIndexFailed)
	if ix != nil {
		t.Error("a failed startup returned the index")
	}
	_, err = f.svc.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "x"})
	wantCode(t, err, sessionquery.CodeSearchDisabled)

	c.OpenAt = OpenAtFirstSearch
	_, dispose, err := Mount(context.Background(), f.svc, c, Options{})
	if err != nil {
		t.Fatalf("first-search mount: %v", err)
	}
	defer dispose()
	_, err = f.svc.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "x"})
	wantCode(t, err, sessionquery.CodeIndexFailed)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "x"})
	qe := wantCode(t, err, sessionquery.CodeIndexFailed)
	if qe.Message[:len("session-search SQLite index failed to open: ")] != "session-search SQLite index failed to open: " {
		t.Errorf("message = %q", qe.Message)
	}
}

func TestCloseFinishesTheRunningOperationAndFailsTheRest(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("p", 1), "r1", texts("needle"))
	ctx := context.Background()
	if err := f.ix.Open(ctx); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	// Only the first listing blocks: the running search hands off on it
	// whenever it gets there, however the scheduler orders the goroutines.
	fake.ListHook = func(_ context.Context, n int) {
		if n == 1 {
			close(entered)
			<-release
		}
	}
	queued := watchQueue(f.ix)
	running := make(chan error)
	go func() {
		_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
		running <- err
	}()
	<-entered
	waiting := make(chan error)
	go func() {
		_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
		waiting <- err
	}()
	waitQueued(t, queued, 1)
	closed := make(chan error)
	go func() { closed <- f.ix.Close() }()
	waitQueued(t, queued, 2)
	close(release)
	if err := <-running; err != nil {
		t.Errorf("the running search failed: %v", err)
	}
	qe := wantCode(t, <-waiting, sessionquery.CodeIndexFailed)
	if qe.Message != "session-search SQLite index is closed" {
		t.Errorf("queued: %q", qe.Message)
	}
	first := <-closed
	if first != nil || f.ix.Close() != first {
		t.Errorf("Close = %v then %v", first, f.ix.Close())
	}
	_, err := f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "p", Query: "needle"})
	wantCode(t, err, sessionquery.CodeIndexFailed)
}

func TestUnmountUninstallsAndClosesTheIndex(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("p", 1), texts("needle"))
	ix, unmount, err := Mount(context.Background(), f.svc, f.cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.svc.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("search = %+v, %v", p, err)
	}
	if err := unmount(); err != nil {
		t.Fatal(err)
	}
	_, err = ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	wantCode(t, err, sessionquery.CodeIndexFailed)
	_, err = f.svc.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	wantCode(t, err, sessionquery.CodeSearchDisabled)
}

// TestOneLookReconcilesOnce: under OneLook, the first operation brings
// the index up to date and the later ones read it as it was left; another
// context sees the later write.
func TestOneLookReconcilesOnce(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	ctx := OneLook(context.Background())
	search := func(ctx context.Context) []string {
		t.Helper()
		p, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
		if err != nil {
			t.Fatal(err)
		}
		return sorted(sessionIDs(p))
	}
	if got := search(ctx); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("first search: %v", got)
	}
	f.persist(hdr("b", 2), texts("needle b"))
	if got := search(ctx); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("a second search under the same OneLook reconciled again: %v", got)
	}
	if got := search(context.Background()); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("a search outside it: %v", got)
	}
	// A file deleted underneath is reopened, rebuilt and brought up to
	// date even under the same OneLook.
	if err := removeDatabase(f.cfg.Path); err != nil {
		t.Fatal(err)
	}
	if got := search(ctx); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("after the file was deleted, under the same OneLook: %v", got)
	}
}

// TestAResidentIndexKeepsThePagesItReads: a brief command's index reads
// through a page cache of a few pages, a resident process's (an editor's
// agent, the terminal UI) keeps up to 32 MiB (see cacheSmall).
func TestAResidentIndexKeepsThePagesItReads(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("a", 1), texts("alpha beta"))
	resident, err := New(f.cfg, f.svc, Options{Resident: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resident.Close() })
	ctx := context.Background()
	for _, c := range []struct {
		name string
		ix   *Index
		want string
	}{{"brief", f.ix, cacheSmall}, {"resident", resident, cacheSpill}} {
		if _, err := c.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "alpha"}); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := c.ix.db.conn.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: cache_size %s, want %s", c.name, got, c.want)
		}
	}
}
