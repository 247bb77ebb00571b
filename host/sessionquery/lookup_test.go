package sessionquery

import (
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// listOnly hides the one-id lookup, so load takes the design's List path.
type listOnly struct{ Persistence }

// TestReadSessionByLookupMatchesListPath reads each kind of log through the
// real store both ways and requires identical results.
func TestReadSessionByLookupMatchesListPath(t *testing.T) {
	root := t.TempDir()
	st := store.New(filepath.Join(root, "sessions"), store.Options{})
	cwd := filepath.Join(root, "work")
	createStored(t, st, session.Header{ID: "ok", CreatedAt: 1, Cwd: &cwd},
		ev(0, session.TypeUserMessage, userText("hello")))
	corrupt := createStored(t, st, session.Header{ID: "corrupt", CreatedAt: 2, Cwd: &cwd})
	if err := os.WriteFile(corrupt, []byte("{not a header}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badBody := createStored(t, st, session.Header{ID: "badbody", CreatedAt: 3, Cwd: &cwd})
	appendBytes(t, badBody, "{not json}\n")
	dir := createStored(t, st, session.Header{ID: "dir", CreatedAt: 4, Cwd: &cwd})
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := createStored(t, st, session.Header{ID: "fifo", CreatedAt: 5, Cwd: &cwd})
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ok", "missing", "corrupt", "badbody", "dir", "fifo", "../x"} {
		t.Run(id, func(t *testing.T) {
			direct := newFixture(t, DefaultConfig())
			direct.mount(t, NewStorePersistence(st))
			listed := newFixture(t, DefaultConfig())
			listed.mount(t, listOnly{NewStorePersistence(st)})
			a, aerr := direct.svc.ReadSession(t.Context(), id)
			b, berr := listed.svc.ReadSession(t.Context(), id)
			if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(errString(aerr), errString(berr)) {
				t.Fatalf("lookup = %+v, %v; list = %+v, %v", a, aerr, b, berr)
			}
			if id == "ok" && aerr != nil {
				t.Fatalf("ok: %v", aerr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
