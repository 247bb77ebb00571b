package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestJournalRecordsCreateFlushAndNothingElse(t *testing.T) {
	fx := newFixture(t, Options{})
	if head, err := fx.s.ChangesHead(); err != nil || head != 0 {
		t.Fatalf("ChangesHead of a new store = %d, %v", head, err)
	}
	if changes, next, err := fx.s.Changes(0); err != nil || len(changes) != 0 || next != 0 {
		t.Fatalf("Changes(0) without a journal = %v, %d, %v", changes, next, err)
	}

	w := mustCreate(t, fx.s, testHeader("s-j"))
	changes, cur, err := fx.s.Changes(0)
	if err != nil || len(changes) != 1 {
		t.Fatalf("after Create: %+v, %v", changes, err)
	}
	if c := changes[0]; c.ID != "s-j" || c.Path != w.Path() || c.Size != fileSize(t, w.Path()) {
		t.Errorf("record = %+v", c)
	}

	mustAppend(t, w, ev(0, session.TypeTurnStart, `{"turn":1}`))
	if changes, _, _ := fx.s.Changes(cur); len(changes) != 0 {
		t.Errorf("an Append without Flush was journaled: %+v", changes)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	changes, cur2, err := fx.s.Changes(cur)
	if err != nil || len(changes) != 1 || changes[0].Size != fileSize(t, w.Path()) {
		t.Fatalf("after Flush twice: %+v, %v", changes, err)
	}
	mustClose(t, w)
	if changes, cur3, _ := fx.s.Changes(cur2); len(changes) != 0 || cur3 != cur2 {
		t.Errorf("Close with nothing new journaled %+v", changes)
	}
	if head, _ := fx.s.ChangesHead(); head != cur2 {
		t.Errorf("ChangesHead = %d, want the last cursor %d", head, cur2)
	}
}

func TestJournalResetIsDetected(t *testing.T) {
	tests := map[string]func(t *testing.T, path string){
		"deleted": func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		},
		"truncated in place": func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		},
		"damaged record": func(t *testing.T, path string) {
			appendRaw(t, path, "{not a record}\n")
		},
	}
	for name, damage := range tests {
		t.Run(name, func(t *testing.T) {
			fx := newFixture(t, Options{})
			mustClose(t, mustCreate(t, fx.s, testHeader("s-1")))
			_, cur, err := fx.s.Changes(0)
			if err != nil {
				t.Fatal(err)
			}
			damage(t, filepath.Join(fx.root, journalName))
			_, next, err := fx.s.Changes(cur)
			var re *JournalResetError
			if !errors.As(err, &re) || re.Next != next {
				t.Fatalf("Changes err = %v (next %d), want JournalResetError", err, next)
			}
			// Following from Next sees later changes and no stale ones.
			mustClose(t, mustCreate(t, fx.s, testHeader("s-2")))
			changes, _, err := fx.s.Changes(re.Next)
			if err != nil || len(changes) != 1 || changes[0].ID != "s-2" {
				t.Fatalf("Changes(Next) = %+v, %v", changes, err)
			}
		})
	}
}

func TestJournalReplacedAndRegrownIsAReset(t *testing.T) {
	fx := newFixture(t, Options{})
	mustClose(t, mustCreate(t, fx.s, testHeader("s-1")))
	_, cur, err := fx.s.Changes(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(fx.root, journalName)); err != nil {
		t.Fatal(err)
	}
	// The new journal grows well past the old cursor's offset.
	for _, id := range []string{"s-2", "s-3", "s-4", "s-5"} {
		mustClose(t, mustCreate(t, fx.s, testHeader(id)))
	}
	var re *JournalResetError
	if _, _, err := fx.s.Changes(cur); !errors.As(err, &re) {
		t.Fatalf("Changes(old cursor) err = %v, want JournalResetError", err)
	}
}

func TestJournalTornRecordWaitsForItsNewline(t *testing.T) {
	fx := newFixture(t, Options{})
	mustClose(t, mustCreate(t, fx.s, testHeader("s-1")))
	_, cur, _ := fx.s.Changes(0)
	path := filepath.Join(fx.root, journalName)
	appendRaw(t, path, `{"id":"s-1","path":"/x","si`)
	changes, next, err := fx.s.Changes(cur)
	if err != nil || len(changes) != 0 || next != cur {
		t.Fatalf("torn record: %+v, %d (cursor %d), %v", changes, next, cur, err)
	}
	appendRaw(t, path, `ze":5}`+"\n")
	changes, _, err = fx.s.Changes(cur)
	if err != nil || len(changes) != 1 || changes[0].Size != 5 {
		t.Fatalf("completed record: %+v, %v", changes, err)
	}
}

func TestJournalWithoutHeadUsesPlainOffsets(t *testing.T) {
	fx := newFixture(t, Options{})
	if err := os.MkdirAll(fx.root, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"id":"s-1","path":"/p","size":3}` + "\n"
	if err := os.WriteFile(filepath.Join(fx.root, journalName), []byte(rec+rec), 0o600); err != nil {
		t.Fatal(err)
	}
	changes, next, err := fx.s.Changes(0)
	if err != nil || len(changes) != 2 || next != int64(2*len(rec)) {
		t.Fatalf("Changes = %+v, %d, %v", changes, next, err)
	}
	if _, _, err := fx.s.Changes(-1); err == nil {
		t.Error("a negative cursor was accepted")
	}
}

// TestAJournalThatIsNotAFileHangsNothing plants a FIFO or a directory as
// changes.log (and as a session's lock): writes still succeed and say what
// is wrong, and readers get a reset to list every session, never a hang.
func TestAJournalThatIsNotAFileHangsNothing(t *testing.T) {
	for name, plant := range map[string]func(path string) error{
		"fifo":      func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"directory": func(path string) error { return os.Mkdir(path, 0o700) },
	} {
		t.Run(name, func(t *testing.T) {
			fx := newFixture(t, Options{})
			if err := os.MkdirAll(fx.root, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := plant(filepath.Join(fx.root, journalName)); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				w := mustCreate(t, fx.s, testHeader("s-fifo"))
				mustAppend(t, w, ev(0, session.TypeTurnStart, `{"turn":1}`))
				if err := w.Flush(); err != nil {
					t.Error(err)
				}
				mustClose(t, w)
				lock := filepath.Join(filepath.Dir(w.Path()), lockName)
				if err := os.Remove(lock); err != nil {
					t.Error(err)
				}
				if err := plant(lock); err != nil {
					t.Error(err)
				}
				if fx.s.WriterRunning(w.Path()) {
					t.Errorf("WriterRunning with a %s as the lock is true", name)
				}
				if head, err := fx.s.ChangesHead(); err != nil || head != 0 {
					t.Errorf("ChangesHead = %d, %v; want 0", head, err)
				}
				var reset *JournalResetError
				if _, next, err := fx.s.Changes(0); !errors.As(err, &reset) || next != 0 || !strings.Contains(err.Error(), "not a regular file; remove it") {
					t.Errorf("Changes(0) = %d, %v; want a reset to list everything", next, err)
				}
				if _, _, err := fx.s.Inspect(t.Context(), "s-fifo"); err != nil {
					t.Errorf("the session is unreadable: %v", err)
				}
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("a store call hangs on a changes.log that is a " + name)
			}
			if !strings.Contains(fx.logs.String(), "not a regular file") {
				t.Errorf("no warning names the journal problem:\n%s", fx.logs.String())
			}
		})
	}
}
