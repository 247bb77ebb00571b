package store

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// specialLog puts something that is not a regular file where session id's
// log belongs.
func specialLog(t *testing.T, s *Store, id, kind string) string {
	t.Helper()
	dir := filepath.Join(s.Root(), WorkspaceSlug(session.Ptr("/work/proj")), id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, logName)
	switch kind {
	case "directory":
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
	case "fifo":
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	case "socket":
		// A socket path must fit in sun_path: listen in a short directory
		// and move the socket into place (rename keeps it a socket).
		short, err := os.MkdirTemp("", "sock")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(short) })
		l, err := net.Listen("unix", filepath.Join(short, "s"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		if err := os.Rename(filepath.Join(short, "s"), path); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unknown kind %q", kind)
	}
	return path
}

func TestSpecialFilesAreUnreadableLogsNotHangsOrFailures(t *testing.T) {
	for _, kind := range []string{"directory", "fifo", "socket"} {
		t.Run(kind, func(t *testing.T) {
			fx := newFixture(t, Options{})
			mustClose(t, mustCreate(t, fx.s, testHeader("s-good")))
			path := specialLog(t, fx.s, "s-bad", kind)
			entries, err := fx.s.List(t.Context())
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if len(entries) != 1 || entries[0].Header.ID != "s-good" {
				t.Errorf("List = %v, want only s-good", entries)
			}
			if !strings.Contains(fx.logs.String(), "skipping unreadable session log") {
				t.Errorf("no warning for the %s: %s", kind, fx.logs.String())
			}
			_, err = fx.s.Stat(t.Context(), "s-bad")
			if ce := asCorrupt(t, err); ce.Line != 0 || ce.Path != path || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Stat = %v", err)
			}
			_, _, err = fx.s.Inspect(t.Context(), "s-bad")
			asCorrupt(t, err)
			_, _, err = fx.s.Load(t.Context(), "s-bad")
			asCorrupt(t, err)
			if _, _, err := fx.s.Inspect(t.Context(), "s-good"); err != nil {
				t.Errorf("Inspect of the good log: %v", err)
			}
		})
	}
}

func TestEventOverTheLimitIsCorruptAndStreamedPast(t *testing.T) {
	fx := newFixture(t, Options{})
	big := strings.Repeat("x", 3*MaxEventBytes)
	path := writeLog(t, fx.s, "s-big", rawHeader("s-big")+lines(ev(0, "a", `{}`))+
		`{"type":"a","seq":1,"time":1,"data":"`+big+`"}`+"\n"+lines(ev(2, "a", `{}`)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := fx.s.Inspect(t.Context(), "s-big")
	runtime.ReadMemStats(&after)
	ce := asCorrupt(t, err)
	if ce.Line != 3 || ce.Path != path || !strings.Contains(err.Error(), "larger than the 16 MiB limit") {
		t.Errorf("Inspect = %v, want the oversized event at line 3", err)
	}
	// The line is three times the limit; it is measured and skipped, so
	// none of it is held (the read buffer and the measuring window are).
	if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
		t.Errorf("reading past the oversized event allocated %d MiB", got>>20)
	}
	if entries, err := fx.s.List(t.Context()); err != nil || len(entries) != 1 {
		t.Errorf("List = %v, %v; the header is fine", entries, err)
	}
}

func TestOversizedTornTailIsStillATornTail(t *testing.T) {
	fx := newFixture(t, Options{})
	writeLog(t, fx.s, "s-torn", rawHeader("s-torn")+lines(ev(0, "a", `{}`))+`{"type":"a","seq":1,"data":"`+strings.Repeat("y", MaxEventBytes+10))
	_, events, err := fx.s.Inspect(t.Context(), "s-torn")
	if err != nil || len(events) != 1 {
		t.Fatalf("Inspect = %d events, %v; want the complete event and the tail ignored", len(events), err)
	}
}

func TestAppendRefusesAnEventOverTheLimit(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("s-refuse"))
	before := readFile(t, w.Path())
	err := w.Append(ev(0, "a", `"`+strings.Repeat("z", MaxEventBytes)+`"`))
	if err == nil || !strings.Contains(err.Error(), "over the 16 MiB limit") {
		t.Fatalf("Append = %v, want a refusal", err)
	}
	if got := readFile(t, w.Path()); string(got) != string(before) {
		t.Errorf("the refused event changed the log")
	}
	mustAppend(t, w, ev(0, "a", `{}`))
	mustClose(t, w)
	if _, events, err := fx.s.Inspect(t.Context(), "s-refuse"); err != nil || len(events) != 1 {
		t.Errorf("Inspect = %d events, %v", len(events), err)
	}
}
