package sessionquery

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

func createStored(t *testing.T, st *store.Store, h session.Header, events ...session.Event) string {
	t.Helper()
	w, err := st.Create(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) > 0 {
		if err := w.Append(events...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Path()
}

func TestStorePersistenceServesPersistedLogsWithoutChangingThem(t *testing.T) {
	root := t.TempDir()
	st := store.New(filepath.Join(root, "sessions"), store.Options{})
	cwd := filepath.Join(root, "work")
	good := createStored(t, st, session.Header{ID: "good", CreatedAt: 2, Cwd: &cwd},
		ev(0, session.TypeUserMessage, userText("stored needle")),
		titleEvent(1, "Stored title"))
	bad := createStored(t, st, session.Header{ID: "bad", CreatedAt: 1, Cwd: &cwd},
		ev(0, session.TypeUserMessage, userText("fine")))
	// A complete line that is not an event corrupts the log; a torn tail on
	// the good log is a crash's leftover that reads must ignore.
	appendBytes(t, bad, "{not json}\n")
	appendBytes(t, good, `{"type":"user/mess`)
	before := readBytes(t, good)

	fx := newFixture(t, DefaultConfig())
	fx.mount(t, NewStorePersistence(st))
	ctx := t.Context()
	records, err := fx.svc.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(records); !equalIDs(got, "good", "bad") || records[0].Live || !records[0].Persisted {
		t.Fatalf("records = %+v", records)
	}
	docs, err := fx.svc.FilterEvents(ctx, "good", []EventFilter{{Kind: KindText, Text: "NEEDLE"}})
	if err != nil || len(docs) != 1 || docs[0].Seq != 0 {
		t.Fatalf("FilterEvents = %+v, %v", docs, err)
	}
	title, err := fx.svc.ReadTitle(ctx, "good")
	if err != nil || title == nil || title.Title != "Stored title" {
		t.Fatalf("ReadTitle = %+v, %v", title, err)
	}
	if _, err := fx.svc.ReadSession(ctx, "good"); err != nil {
		t.Fatal(err)
	}
	_, err = fx.svc.ListEvents(ctx, "bad")
	qe := wantCode(t, err, CodeCorruptSession)
	if want := `stored session "bad" is corrupt: `; len(qe.Message) < len(want) || qe.Message[:len(want)] != want {
		t.Fatalf("message = %q", qe.Message)
	}
	var ce *store.CorruptError
	if !errors.As(err, &ce) {
		t.Fatal("the corruption error lost its cause")
	}
	_, err = fx.svc.ListEvents(ctx, "absent")
	wantCode(t, err, CodeSessionNotFound)
	if after := readBytes(t, good); !bytes.Equal(before, after) {
		t.Fatal("a query changed a stored log")
	}
}

func appendBytes(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
