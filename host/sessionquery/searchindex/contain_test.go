package searchindex

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// brokenLogs puts, beside good sessions, a log with a corrupt body line, a
// log whose surface fold fails, one with an event over the store's limit,
// and a FIFO and a directory where logs belong.
func brokenLogs(t *testing.T, f *fixture) {
	t.Helper()
	f.persist(hdr("good-a", 1), texts("needle in a good log"))
	f.persist(hdr("good-b", 2), texts("another needle"))
	f.persist(hdr("bad-body", 3), texts("needle before the damage"))
	f.persist(hdr("bad-big", 4), texts("needle before the big event"))
	f.persist(hdr("bad-surface", 5), []session.Event{ev(0, session.TypeUserMessage, userMsg("needle"), func(e *session.Event) {
		e.SurfaceOp = session.MustMarshal("replace")
		e.SourceEventSeqs = session.MustMarshal([]int{7})
	})})
	appendTo := func(id, raw string) {
		e, err := f.st.Stat(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		fh, err := os.OpenFile(e.Path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.WriteString(raw); err != nil {
			t.Fatal(err)
		}
	}
	appendTo("bad-body", "{not json\n")
	appendTo("bad-big", `{"type":"x","seq":1,"time":1,"data":"`+strings.Repeat("needle ", store.MaxEventBytes/7+1)+`"}`+"\n")
	ws := filepath.Join(f.st.Root(), store.WorkspaceSlug(session.Ptr("/w")))
	for _, id := range []string{"bad-fifo", "bad-dir"} {
		if err := os.MkdirAll(filepath.Join(ws, id), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "bad-fifo", "session.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "bad-dir", "session.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
}

func TestBrokenLogsAffectOnlyThemselves(t *testing.T) {
	f := newFixture(t)
	brokenLogs(t, f)
	logs := &lockedBuffer{}
	ix, err := New(f.cfg, f.svc, Options{Log: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	f.ix = ix
	for range 2 {
		got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))
		if strings.Join(got, ",") != "good-b,good-a" {
			t.Errorf("search finds %v, want the good sessions", got)
		}
	}
	for _, id := range []string{"bad-body", "bad-big", "bad-surface"} {
		if n := strings.Count(logs.String(), "session="+id); n != 1 {
			t.Errorf("%s: %d warnings over two searches, want 1:\n%s", id, n, logs.String())
		}
	}
	if err := f.ix.Rebuild(context.Background(), nil); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})); len(got) != 2 {
		t.Errorf("after a rebuild search finds %v, want the good sessions", got)
	}
	p := f.events(sessionquery.EventSearchRequest{SessionID: "good-a", Query: "needle"})
	if len(p.Items) != 1 {
		t.Errorf("event search in a good session: %d hits", len(p.Items))
	}
	_, err = f.svc.ReadSession(context.Background(), "bad-body")
	wantCode(t, err, sessionquery.CodeCorruptSession)
}

func TestABrokenLogThatIsFixedIsIndexed(t *testing.T) {
	f := newFixture(t)
	brokenLogs(t, f)
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	e, err := f.st.Stat(context.Background(), "bad-body")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(raw), "{not json\n", "", 1)
	if err := os.WriteFile(e.Path+".new", []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(e.Path+".new", e.Path); err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))
	if len(got) != 3 {
		t.Errorf("after the fix search finds %v, want bad-body too", got)
	}
}
