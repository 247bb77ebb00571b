package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
)

// hostileSearches are /search arguments that would break a front end
// handing them to FTS5 unquoted, or a highlighter indexing bytes.
var hostileSearches = []string{
	`"`, `"zebra`, `zebra OR lion`, `OR`, `NEAR(`, `NEAR(zebra lion, 2)`, `*`, `zeb*`, `^zebra`,
	`-zebra`, `text:zebra`, `{text}: zebra`, `(zebra`, `'; DROP TABLE persisted_docs; --`,
	"zebra \xff\xfe lion", "\uFDD0zebra\uFDD1", "zebra\x00lion", " \u00a0 ", "İstanbul zebra",
	strings.Repeat("z", 1<<20), strings.Repeat(`"`, 1<<20),
}

// withIndex swaps the backend's scanning engine for the real SQLite
// index, in memory.
func withIndex(t *testing.T, b *backend) {
	t.Helper()
	ix, err := searchindex.New(searchindex.DefaultConfig(searchindex.MemoryPath), b.query, searchindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	b.query.SetEngine(ix)
}

// persistText writes a closed session in the backend's workspace whose
// only prompt is text.
func persistText(t *testing.T, b *backend, n int, text string) string {
	t.Helper()
	id := fmt.Sprintf("00000000-0000-4000-9000-%012d", n)
	h := session.Header{ID: id, CreatedAt: testNow.UnixMilli(), Cwd: session.Ptr(b.cwd), DelegationDepth: session.Ptr(0)}
	msg := session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(text)}, Source: session.UserSource, ID: "u"}
	w, err := b.store.Create(h, []session.Event{{Type: session.TypeUserMessage, Seq: 0, Time: h.CreatedAt, Data: session.MustMarshal(msg), SurfaceOp: session.OpAppend}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSearchTreatsHostileQueriesAsText runs /search's query path (search,
// then the highlighter and the error line) over the real index with
// queries holding FTS5 syntax, NUL, broken UTF-8, forged highlight markers
// and 1 MB of text: each either finds the session that holds it verbatim
// or reports a typed, readable error; nothing panics and the highlighter
// never changes the snippet it marks.
func TestSearchTreatsHostileQueriesAsText(t *testing.T) {
	b := newBackend(t, newScripted())
	withIndex(t, b)
	planted := map[string]string{}
	for i, q := range hostileSearches {
		if len(q) < 1000 && !strings.ContainsRune(q, 0) && strings.IndexFunc(q, unicode.IsLetter) >= 0 {
			planted[q] = persistText(t, b, i, "probe "+q+" tail")
		}
	}
	th := newTheme(true)
	ctx := context.Background()
	for _, q := range hostileSearches {
		res, err := search(ctx, b.query, q, false, mustWorkspace(t, b.cwd), nil)
		if err != nil {
			var qe *sessionquery.Error
			if !errors.As(err, &qe) || qe.Code != sessionquery.CodeInvalidQuery {
				t.Errorf("%.40q: untyped or unexpected error %v", q, err)
			}
			line := searchError(err)
			if !strings.HasPrefix(line, "the query is not searchable: ") || strings.Contains(strings.ToLower(line), "fts5") {
				t.Errorf("%.40q: error line %q", q, line)
			}
			continue
		}
		if id, ok := planted[q]; ok {
			found := false
			for _, g := range res.groups {
				found = found || g.hit.Header.ID == id
			}
			if !found {
				t.Errorf("%.40q: the session holding it verbatim was not found", q)
			}
		}
		for _, g := range res.groups {
			for _, hit := range g.hits {
				text := oneLine(hit.Snippet)
				var got strings.Builder
				for _, s := range highlightTerms(text, q, th) {
					got.WriteString(s.text)
				}
				if got.String() != text {
					t.Errorf("%.40q: highlighting changed the snippet %q into %q", q, text, got.String())
				}
			}
		}
	}
	// A megabyte of words costs the index a phrase of 174,763 tokens (the
	// service tests search it); here it only meets the highlighter.
	big := strings.Repeat("zebra ", 1<<20/6)
	snippet := "a zebra, then ZEBRA and zebras: " + strings.Repeat("zébra ", 30)
	var got strings.Builder
	for _, s := range highlightTerms(snippet, big, th) {
		got.WriteString(s.text)
	}
	if got.String() != snippet {
		t.Errorf("highlighting a 1 MB query changed the snippet into %q", got.String())
	}
	// A lone surrogate arrives from JSON as U+FFFD.
	var q string
	if err := json.Unmarshal([]byte(`"\ud800 zebra"`), &q); err != nil {
		t.Fatal(err)
	}
	if _, err := search(ctx, b.query, q, true, mustWorkspace(t, b.cwd), nil); err != nil {
		t.Errorf("lone surrogate: %v", err)
	}
}

// TestSearchPageShowsHostileQueriesLiterally types FTS5 syntax into the
// running UI's /search and reads the page: the session holding the text is
// listed, and no engine error reaches the screen.
func TestSearchPageShowsHostileQueriesLiterally(t *testing.T) {
	b := newBackend(t, newScripted())
	withIndex(t, b)
	persistText(t, b, 1, `the zebra OR lion NEAR( "quoted" note`)
	d := startUI(t, b, nil)
	for _, q := range []string{`zebra OR lion`, `NEAR(`, `"quoted`} {
		d.submit("/search " + q)
		screen := d.waitText("Search", "1 session")
		if !strings.Contains(screen, "the zebra OR lion NEAR(") || strings.Contains(strings.ToLower(screen), "fts5") {
			t.Errorf("/search %s:\n%s", q, screen)
		}
		d.key(tcell.KeyEscape)
		d.waitGone("1 session")
	}
}

func mustWorkspace(t *testing.T, cwd string) session.Workspace {
	t.Helper()
	ws, err := session.ResolveWorkspace(cwd)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
