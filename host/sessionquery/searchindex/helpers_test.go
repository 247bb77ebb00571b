package searchindex

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/session/sessiontest"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// fixture is a service over a real JSONL store in a temp dir and an index
// on a real SQLite file next to it.
type fixture struct {
	t       *testing.T
	dir     string
	reg     *session.Registry
	svc     *sessionquery.Service
	st      *store.Store
	ix      *Index
	cfg     Config
	unmount func()
	// notices are every index's one-line messages for the user.
	mu      sync.Mutex
	notices []string
}

type fixtureOpt func(*Config)

func newFixture(t *testing.T, opts ...fixtureOpt) *fixture {
	t.Helper()
	dir := t.TempDir()
	cfg := DefaultConfig(filepath.Join(dir, "index", "session-query.db"))
	for _, o := range opts {
		o(&cfg)
	}
	reg := session.NewRegistry()
	svc, err := sessionquery.New(sessionquery.DefaultConfig(), reg)
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(filepath.Join(dir, "sessions"), store.Options{})
	f := &fixture{t: t, dir: dir, reg: reg, svc: svc, st: st, cfg: cfg}
	f.unmount = svc.Mount(sessionquery.NewStorePersistence(st))
	f.ix = f.newIndex(cfg)
	return f
}

func (f *fixture) newIndex(cfg Config) *Index {
	f.t.Helper()
	ix, err := New(cfg, f.svc, Options{Notice: func(msg string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.notices = append(f.notices, msg)
	}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = ix.Close() })
	return ix
}

// takeNotices returns the notices so far and forgets them.
func (f *fixture) takeNotices() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.notices
	f.notices = nil
	return n
}

// hdr is a session header in workspace /w.
func hdr(id string, createdAt int64) session.Header {
	return session.Header{Version: 0, ID: id, CreatedAt: createdAt, Cwd: session.Ptr("/w")}
}

// ev builds a raw event with a deterministic time.
func ev(seq int, typ string, data any, opts ...session.AppendOption) session.Event {
	return sessiontest.Event(1_700_000_000_000+int64(seq), seq, typ, data, opts...)
}

func userMsg(text string) session.Message { return sessiontest.UserText(text) }

func assistantMsg(text string) session.AssistantMessage {
	return session.AssistantMessage{Message: session.Message{
		Role: session.RoleAssistant, Content: []session.ContentBlock{session.TextBlock(text)}, Source: session.ModelSource("fake", "m"), ID: "a",
	}}
}

// texts builds a log of alternating user and assistant messages.
func texts(msgs ...string) []session.Event {
	out := make([]session.Event, len(msgs))
	for i, m := range msgs {
		if i%2 == 0 {
			out[i] = ev(i, session.TypeUserMessage, userMsg(m))
		} else {
			out[i] = ev(i, session.TypeAssistantMessage, assistantMsg(m))
		}
	}
	return out
}

// persist writes a closed session log to the store.
func (f *fixture) persist(h session.Header, events []session.Event) {
	f.t.Helper()
	w, err := f.st.Create(h, events)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		f.t.Fatal(err)
	}
}

// removeLog deletes session id's log (its directory) behind dsh's back,
// as a user would, writing no journal record.
func (f *fixture) removeLog(id string) {
	f.t.Helper()
	entry, err := f.st.Stat(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(entry.Path)); err != nil {
		f.t.Fatal(err)
	}
}

// live attaches an in-memory session (no sink) with the given events.
func (f *fixture) live(h session.Header, events []session.Event) *session.Live {
	f.t.Helper()
	l := session.NewLive(h, events, session.LiveOptions{Now: func() time.Time { return time.UnixMilli(1_700_000_100_000) }})
	if err := f.reg.Attach(l); err != nil {
		f.t.Fatal(err)
	}
	return l
}

func (f *fixture) sessions(req sessionquery.SessionSearchRequest) sessionquery.SessionSearchPage {
	f.t.Helper()
	p, err := f.ix.SearchSessions(context.Background(), req)
	if err != nil {
		f.t.Fatalf("SearchSessions(%q): %v", req.Query, err)
	}
	return p
}

func (f *fixture) events(req sessionquery.EventSearchRequest) sessionquery.EventSearchPage {
	f.t.Helper()
	p, err := f.ix.SearchEvents(context.Background(), req)
	if err != nil {
		f.t.Fatalf("SearchEvents(%q in %s): %v", req.Query, req.SessionID, err)
	}
	return p
}

func sessionIDs(p sessionquery.SessionSearchPage) []string {
	out := []string{}
	for _, h := range p.Items {
		out = append(out, h.Header.ID)
	}
	return out
}

func seqs(p sessionquery.EventSearchPage) []int {
	out := []int{}
	for _, h := range p.Items {
		out = append(out, h.Seq)
	}
	return out
}

// newFakeFixture is a fixture whose persistence is a fake (no change feed)
// instead of the store.
func newFakeFixture(t *testing.T, opts ...fixtureOpt) (*fixture, *fakePersistence) {
	t.Helper()
	f := newFixture(t, opts...)
	f.unmount()
	fake := newFakePersistence()
	f.unmount = f.svc.Mount(fake)
	return f, fake
}

// count returns a single integer from the index database.
func (f *fixture) count(query string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.ix.begin(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	defer f.ix.queue.release()
	if err := f.ix.db.conn.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// watchQueue returns a channel that receives the queue length every time
// an operation of ix starts waiting in it.
func watchQueue(ix *Index) <-chan int {
	ch := make(chan int, 64)
	ix.queue.mu.Lock()
	ix.queue.queued = func(n int) { ch <- n }
	ix.queue.mu.Unlock()
	return ch
}

// waitQueued blocks until the queue holds n waiting operations.
func waitQueued(t *testing.T, queued <-chan int, n int) {
	t.Helper()
	for got := range queued {
		if got >= n {
			return
		}
	}
}

// exec runs a statement on the index's connection.
func (f *fixture) exec(query string) {
	f.t.Helper()
	if err := f.ix.begin(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	defer f.ix.queue.release()
	if _, err := f.ix.db.conn.ExecContext(context.Background(), query); err != nil {
		f.t.Fatal(err)
	}
}
