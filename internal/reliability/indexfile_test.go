package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// damage is something done to the index file behind a running runtime.
type damage struct {
	name string
	do   func(t *testing.T, path string)
	// refused: the file is not ours, so dsh must not touch it; search
	// fails with a typed error naming it until the user moves it away.
	refused bool
	hint    string
}

var damages = []damage{
	{name: "deleted", do: func(t *testing.T, path string) {
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}},
	{name: "truncated to zero", do: func(t *testing.T, path string) { checkpointAndTruncate(t, path, 0) }},
	{name: "truncated to half", do: func(t *testing.T, path string) { checkpointAndTruncate(t, path, -1) }},
	{name: "replaced by a foreign database", refused: true, hint: "belongs to another application", do: func(t *testing.T, path string) {
		foreign := filepath.Join(t.TempDir(), "foreign.db")
		db, err := sql.Open("sqlite", foreign)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{"PRAGMA application_id = 123", "CREATE TABLE precious(x)", "INSERT INTO precious VALUES (42)"} {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(foreign, path); err != nil {
			t.Fatal(err)
		}
	}},
	{name: "replaced by a file that is not SQLite", refused: true, hint: "move it aside or delete it", do: func(t *testing.T, path string) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(strings.Repeat("not a database\n", 500)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}},
}

// checkpointAndTruncate moves the write-ahead log into the main file from
// a second connection, then cuts the main file to size (-1: half).
func checkpointAndTruncate(t *testing.T, path string, size int64) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if size < 0 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		size = fi.Size() / 2
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// TestIndexDamagedUnderARunningRuntimeNeverServesWrongResults damages the
// index file of a running TUI runtime between turns. Every later search
// either returns exactly what the logs say or fails with a typed
// session-query error; a file that is ours is rebuilt, one that is not is
// never touched, and after it is moved away Rebuild brings search back.
func TestIndexDamagedUnderARunningRuntimeNeverServesWrongResults(t *testing.T) {
	for _, dmg := range damages {
		t.Run(dmg.name, func(t *testing.T) {
			ctx := context.Background()
			script := make([]fakellm.Reply, 8)
			for i := range script {
				script[i] = fakellm.Reply{Text: fmt.Sprintf("the answer carries replytok%02d as its marker", i)}
			}
			srv := fakellm.New(script...)
			defer srv.Close()
			h := newHermetic(t)
			cfg := h.config(t, "", "llm.base_url="+srv.URL, "llm.api_key=k")
			rt := newRuntime(t, compositions.TUI, cfg)
			ix := rt.Index
			if ix == nil {
				t.Fatal("the TUI runtime mounts no index")
			}
			turn := func(a *agent.Agent, prompt string) {
				t.Helper()
				a.Followup(agent.UserText(prompt, rt.NewID()))
				if err := a.WhenIdle(ctx); err != nil {
					t.Fatal(err)
				}
			}
			closed, err := rt.NewSession(ctx, h.cwd)
			if err != nil {
				t.Fatal(err)
			}
			turn(closed, "please look into prompttok01 for me")
			if err := rt.CloseSession(closed); err != nil {
				t.Fatal(err)
			}
			live, err := rt.NewSession(ctx, h.cwd)
			if err != nil {
				t.Fatal(err)
			}
			turn(live, "now check prompttok02 and the rest")
			tokens := []string{"prompttok01", "prompttok02", "replytok00", "replytok01"}
			if n := checkTokens(t, rt, tokens, false); n != 0 {
				t.Fatalf("%d searches failed before any damage", n)
			}

			dmg.do(t, cfg.Value("session_query.path").(string))
			before, _ := os.ReadFile(cfg.Value("session_query.path").(string))

			// The runtime keeps working: the live session takes another
			// turn and a new session is written and closed.
			turn(live, "then prompttok03 please")
			later, err := rt.NewSession(ctx, h.cwd)
			if err != nil {
				t.Fatal(err)
			}
			turn(later, "finally prompttok04 too")
			if err := rt.CloseSession(later); err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, "prompttok03", "prompttok04", "replytok02", "replytok03")
			failures := checkTokens(t, rt, tokens, true)
			switch {
			case dmg.refused && failures != len(tokens):
				t.Fatalf("%d of %d searches answered from a file that is not ours", len(tokens)-failures, len(tokens))
			case !dmg.refused && failures > 1:
				// A truncation that leaves the file longer than when it
				// was opened is found by the first query that reads a
				// missing page: that search fails (typed) and discards
				// the file, the next one rebuilds it.
				t.Fatalf("%d searches failed after the file was %s; it is ours and must be rebuilt by the next search", failures, dmg.name)
			}
			if dmg.refused {
				err := ix.Rebuild(ctx, nil)
				if qe := queryErr(t, err); qe.Code != sessionquery.CodeIndexFailed || !strings.Contains(qe.Message, dmg.hint) {
					t.Fatalf("Rebuild over a file that is not ours: %s %q", qe.Code, qe.Message)
				}
				if after, _ := os.ReadFile(cfg.Value("session_query.path").(string)); !reflect.DeepEqual(before, after) {
					t.Fatal("dsh changed a file that is not its index")
				}
				// What the user does: move it aside.
				if err := os.Rename(cfg.Value("session_query.path").(string), cfg.Value("session_query.path").(string)+".moved"); err != nil {
					t.Fatal(err)
				}
			}
			if err := ix.Rebuild(ctx, nil); err != nil {
				t.Fatalf("Rebuild: %v", err)
			}
			if n := checkTokens(t, rt, tokens, false); n != 0 {
				t.Fatalf("%d searches failed after Rebuild", n)
			}
		})
	}
}

// checkTokens searches every token through the runtime's service and
// compares the hits with the logs: the sessions found are exactly those
// whose logs hold the token, each hit's event literally holds it, and
// SearchEvents finds exactly its events. A search may fail only when
// mayFail, and then only with a typed session-query error. It returns the
// number of failed searches.
func checkTokens(t *testing.T, rt *compositions.Runtime, tokens []string, mayFail bool) int {
	t.Helper()
	ctx := context.Background()
	tr, err := readTruth(ctx, rt.Store.Root())
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	fail := func(token string, err error) {
		t.Helper()
		qe := queryErr(t, err)
		if !mayFail {
			t.Fatalf("search %q: %s: %s", token, qe.Code, qe.Message)
		}
		t.Logf("search %q failed: %s: %s", token, qe.Code, qe.Message)
		failed++
	}
	for _, token := range tokens {
		want := tr.sessionsWith(token)
		if len(want) == 0 {
			t.Fatalf("no log holds %q; the test wrote it", token)
		}
		page, err := rt.Query.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: token, Limit: ptr(100)})
		if err != nil {
			fail(token, err)
			continue
		}
		if got := sessionIDs(page); !slices.Equal(got, want) {
			t.Fatalf("search %q found sessions %v, the logs hold it in %v", token, got, want)
		}
		for _, hit := range page.Items {
			ref := docRef{hit.Header.ID, hit.BestMatch.Seq}
			if !slices.Contains(tr.containing(token), ref) {
				t.Fatalf("search %q: best match %s does not hold it", token, ref)
			}
			if line, err := rawLine(tr.paths[ref.Session], ref.Seq); err != nil || !strings.Contains(line, token) {
				t.Fatalf("search %q: the log line of %s does not hold it (%v): %s", token, ref, err, line)
			}
			events, err := rt.Query.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: ref.Session, Query: token, Limit: ptr(100)})
			if err != nil {
				fail(token, err)
				continue
			}
			var got, wantSeqs []int
			for _, e := range events.Items {
				got = append(got, e.Seq)
			}
			for _, d := range tr.containing(token) {
				if d.Session == ref.Session {
					wantSeqs = append(wantSeqs, d.Seq)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, wantSeqs) {
				t.Fatalf("event search %q in %s found seqs %v, the log holds it at %v", token, ref.Session, got, wantSeqs)
			}
		}
	}
	return failed
}
