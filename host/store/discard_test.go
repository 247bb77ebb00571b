package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDiscardRemovesAnUnusedSessionAndItsDirectories(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("unused"))
	dir := filepath.Dir(w.Path())
	if err := w.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.s.Stat(t.Context(), "unused"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat after Discard: %v", err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s survives: %v", d, err)
		}
	}
	// The lock is released and the id is free again.
	mustClose(t, mustCreate(t, fx.s, testHeader("unused")))
}

func TestDiscardKeepsALogWithEvents(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("used"))
	mustAppend(t, w, ev(0, "turn/start", `{"turn":1}`))
	if err := w.Discard(); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Discard of a used log: %v", err)
	}
	mustClose(t, w)
	if _, events, err := fx.s.Inspect(t.Context(), "used"); err != nil || len(events) != 1 {
		t.Fatalf("log after refused discard: %d events, %v", len(events), err)
	}
}

func TestDiscardKeepsASeededLog(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("seeded"), ev(0, "turn/start", `{"turn":1}`))
	if err := w.Discard(); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Discard of a seeded log: %v", err)
	}
	mustClose(t, w)
}

func TestFlushAndCloseAfterDiscardAreNoOps(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("gone"))
	if err := w.Discard(); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(w.Flush(), w.Close()); err != nil {
		t.Fatalf("Flush/Close after Discard: %v", err)
	}
	if err := w.Append(ev(0, "turn/start", `{"turn":1}`)); err == nil {
		t.Fatal("Append after Discard must fail")
	}
}
