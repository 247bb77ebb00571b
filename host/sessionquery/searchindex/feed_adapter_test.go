package searchindex

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

func TestStorePersistenceFeed(t *testing.T) {
	st := store.New(filepath.Join(t.TempDir(), "sessions"), store.Options{})
	p := sessionquery.NewStorePersistence(st)
	ctx := context.Background()
	head, err := p.FeedHead()
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(hdr("a", 1), texts("hello"))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	ids, next, reset, err := p.FeedChanges(head)
	if err != nil || reset || !reflect.DeepEqual(ids, []string{"a"}) || next == head {
		t.Fatalf("FeedChanges = %v, %d, %v, %v", ids, next, reset, err)
	}
	if ids, again, _, _ := p.FeedChanges(next); len(ids) != 0 || again != next {
		t.Errorf("nothing new: %v, %d", ids, again)
	}
	if err := os.Remove(filepath.Join(st.Root(), "changes.log")); err != nil {
		t.Fatal(err)
	}
	if _, _, reset, err := p.FeedChanges(next); err != nil || !reset {
		t.Errorf("after deleting the journal: reset %v, %v", reset, err)
	}
	snap, found, err := p.Snapshot(ctx, "a")
	if err != nil || !found || snap.Header.ID != "a" || snap.Revision == "" {
		t.Errorf("Snapshot(a) = %+v, %v, %v", snap, found, err)
	}
	if _, found, err := p.Snapshot(ctx, "missing"); found || err != nil {
		t.Errorf("Snapshot(missing) = %v, %v", found, err)
	}
	entry, _ := st.Stat(ctx, "a")
	if err := os.WriteFile(entry.Path, []byte("{not a header}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, found, err := p.Snapshot(ctx, "a"); found || err != nil {
		t.Errorf("an unreadable header must read as absent, like List: %v, %v", found, err)
	}
	_, _, err = p.Inspect(ctx, "a")
	if !p.IsCorrupt(err) {
		t.Errorf("Inspect of a corrupt log: %v", err)
	}
	_, _, err = p.Inspect(ctx, "missing")
	if !p.Missing(err) {
		t.Errorf("Inspect of a missing log: %v", err)
	}
}
