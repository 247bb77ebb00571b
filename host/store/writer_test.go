package store

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// faultyFile fails chosen operations on a real file. A failing write first
// writes half of its buffer, as a full disk does.
type faultyFile struct {
	*os.File
	faults *faults
}

type faults struct {
	failWrite    bool
	failTruncate bool
	failSync     bool
}

func (f faultyFile) Write(p []byte) (int, error) {
	if f.faults.failWrite {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func (f faultyFile) Truncate(size int64) error {
	if f.faults.failTruncate {
		return syscall.EIO
	}
	return f.File.Truncate(size)
}

func (f faultyFile) Sync() error {
	if f.faults.failSync {
		return syscall.EIO
	}
	return f.File.Sync()
}

func faultyFixture(t *testing.T) (fixture, *faults) {
	fl := &faults{}
	fx := newFixture(t, Options{openFile: func(name string, flag int, perm os.FileMode) (logFile, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return faultyFile{f, fl}, nil
	}})
	return fx, fl
}

func TestFailedWriteIsRolledBackAndRetryable(t *testing.T) {
	fx, fl := faultyFixture(t)
	w := mustCreate(t, fx.s, testHeader("s-enospc"))
	mustAppend(t, w, ev(0, session.TypeTurnStart, `{"turn":1}`), ev(1, session.TypeStepStart, `{"turn":1,"step":1}`))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	size := fileSize(t, w.Path())

	fl.failWrite = true
	err := w.Append(ev(2, session.TypeUserMessage, `{"content":[],"source":{"kind":"user"},"role":"user","id":"m"}`))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append err = %v, want ENOSPC", err)
	}
	if got := fileSize(t, w.Path()); got != size {
		t.Fatalf("log is %d bytes after a failed write, want %d (rolled back)", got, size)
	}
	_, events, err := fx.s.Inspect(t.Context(), "s-enospc")
	if err != nil || len(events) != 2 {
		t.Fatalf("Inspect after the failure = %d events, %v", len(events), err)
	}

	fl.failWrite = false
	mustAppend(t, w, ev(2, session.TypeUserMessage, `{"content":[],"source":{"kind":"user"},"role":"user","id":"m"}`))
	mustClose(t, w)
	if _, events, err := fx.s.Inspect(t.Context(), "s-enospc"); err != nil || len(events) != 3 {
		t.Fatalf("Inspect after the retry = %d events, %v", len(events), err)
	}
}

func TestWriterIsPoisonedWhenRollbackFails(t *testing.T) {
	fx, fl := faultyFixture(t)
	w := mustCreate(t, fx.s, testHeader("s-poison"))
	mustAppend(t, w, ev(0, session.TypeTurnStart, `{"turn":1}`))

	fl.failWrite, fl.failTruncate = true, true
	err := w.Append(ev(1, session.TypeStepStart, `{"turn":1,"step":1}`))
	if !errors.Is(err, ErrPoisoned) || !strings.Contains(err.Error(), "restart dsh") {
		t.Fatalf("Append err = %v, want ErrPoisoned saying what to do", err)
	}
	fl.failWrite, fl.failTruncate = false, false
	if err := w.Append(ev(1, session.TypeStepStart, `{"turn":1,"step":1}`)); !errors.Is(err, ErrPoisoned) {
		t.Errorf("later Append err = %v, want ErrPoisoned", err)
	}
	if err := w.Flush(); !errors.Is(err, ErrPoisoned) {
		t.Errorf("Flush err = %v, want ErrPoisoned", err)
	}
	if err := w.Close(); !errors.Is(err, ErrPoisoned) {
		t.Errorf("Close err = %v, want ErrPoisoned", err)
	}

	// The lock is released and the half-written line is a torn tail that
	// the next Load repairs, keeping every acknowledged event.
	_, events, err := fx.s.Load(t.Context(), "s-poison")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Type != session.TypeTurnStart || events[1].Type != session.TypeTurnEnd {
		t.Fatalf("events after repair: %d", len(events))
	}
}

func TestFailedFsyncPoisonsTheWriter(t *testing.T) {
	fx, fl := faultyFixture(t)
	w := mustCreate(t, fx.s, testHeader("s-fsync"))
	mustAppend(t, w, ev(0, session.TypeTurnStart, `{"turn":1}`))
	fl.failSync = true
	if err := w.Flush(); !errors.Is(err, ErrPoisoned) || !strings.Contains(err.Error(), "fsync") {
		t.Fatalf("Flush err = %v, want ErrPoisoned", err)
	}
	fl.failSync = false
	if err := w.Flush(); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("a retried Flush err = %v; after a failed fsync it must not report success", err)
	}
	_ = w.Close()
}

func TestAppendValidatesSeqsAndClosedWriter(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("s-seq"), ev(0, "a", `{}`))
	for name, events := range map[string][]session.Event{
		"gap":          {ev(2, "b", `{}`)},
		"repeat":       {ev(0, "b", `{}`)},
		"batch gap":    {ev(1, "b", `{}`), ev(3, "c", `{}`)},
		"no type":      {ev(1, "", `{}`)},
		"invalid data": {ev(1, "b", `{"x":`)},
	} {
		if err := w.Append(events...); err == nil {
			t.Errorf("%s: Append accepted it", name)
		}
	}
	if err := w.Append(); err != nil {
		t.Errorf("empty Append: %v", err)
	}
	mustClose(t, w)
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Append(ev(1, "b", `{}`)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Append after Close err = %v", err)
	}
	if _, events, err := fx.s.Inspect(t.Context(), "s-seq"); err != nil || len(events) != 1 {
		t.Errorf("rejected appends reached the log: %d events, %v", len(events), err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestReadersSeeAPrefixWhileAWriterAppends(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("s-busy"))
	script := crashScript(3, 150)
	done := make(chan error, 1)
	go func() {
		for i, e := range script {
			if err := w.Append(e); err != nil {
				done <- err
				return
			}
			if i%10 == 0 {
				if err := w.Flush(); err != nil {
					done <- err
					return
				}
			}
		}
		done <- w.Close()
	}()
	for reads := 0; ; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			_, events, err := fx.s.Inspect(t.Context(), "s-busy")
			if err != nil || len(events) != len(script) {
				t.Fatalf("final Inspect = %d events, %v", len(events), err)
			}
			t.Logf("%d concurrent reads", reads)
			return
		default:
		}
		_, events, err := fx.s.Inspect(t.Context(), "s-busy")
		if err != nil {
			t.Fatalf("Inspect during appends: %v", err)
		}
		for i, e := range events {
			if !sameLine(e, script[i]) {
				t.Fatalf("Inspect during appends returned a wrong event at %d", i)
			}
		}
		if _, err := fx.s.List(t.Context()); err != nil {
			t.Fatalf("List during appends: %v", err)
		}
	}
}
