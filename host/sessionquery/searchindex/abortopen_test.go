package searchindex

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// TestAbortBeforeTheFirstOpenTouchesNothing is session-query.md §7.E item
// 117 in Go terms: in first-search mode, a search whose context is done by
// the time the index would open answers ABORTED without creating, opening or
// reconciling the database, and the next search opens it and finds the log.
func TestAbortBeforeTheFirstOpenTouchesNothing(t *testing.T) {
	f, fake := newFakeFixture(t)
	fake.put(hdr("p", 1), "r1", texts("needle"))
	path := filepath.Join(t.TempDir(), "deep", "index.db")
	c := DefaultConfig(path)
	c.OpenAt = OpenAtFirstSearch
	ix := f.newIndex(c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
	wantCode(t, err, sessionquery.CodeAborted)
	_, err = ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "p", Query: "needle"})
	wantCode(t, err, sessionquery.CodeAborted)
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an aborted first search created %s (%v)", filepath.Dir(path), err)
	}
	if n := len(fake.Contexts()); n != 0 {
		t.Errorf("an aborted first search made %d backend calls", n)
	}
	p, err := ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle"})
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("the next search = %+v, %v", p, err)
	}
}
