package searchindex

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// gate blocks the next backend call for one session id until released,
// so a test can interleave two processes' reconciliations exactly.
type gate struct {
	mu      sync.Mutex
	id      string
	in      chan struct{}
	release chan struct{}
}

// arm makes the next call for id block; it returns the channel closed
// when that call is reached.
func (g *gate) arm(id string) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.id, g.in, g.release = id, make(chan struct{}), make(chan struct{})
	return g.in
}

func (g *gate) pass(id string) {
	g.mu.Lock()
	if g.id != id || g.in == nil {
		g.mu.Unlock()
		return
	}
	in, release := g.in, g.release
	g.id, g.in = "", nil
	g.mu.Unlock()
	close(in)
	<-release
}

func (g *gate) open() { close(g.release) }

// gatedPersistence is the store adapter with a gate after Inspect and
// InspectExtent (the log is read, not yet committed) and one before Snapshot (which a
// reconciliation calls for a journal or pending id, and for a live session
// whose log changed).
type gatedPersistence struct {
	*sessionquery.StorePersistence
	inspect, snapshot gate
}

func (p *gatedPersistence) Inspect(ctx context.Context, id string) (session.Header, []session.Event, error) {
	h, events, err := p.StorePersistence.Inspect(ctx, id)
	p.inspect.pass(id)
	return h, events, err
}

func (p *gatedPersistence) InspectExtent(ctx context.Context, id string) (session.Header, []session.Event, store.Extent, error) {
	h, events, x, err := p.StorePersistence.InspectExtent(ctx, id)
	p.inspect.pass(id)
	return h, events, x, err
}

func (p *gatedPersistence) Snapshot(ctx context.Context, id string) (sessionquery.PersistedSnapshot, bool, error) {
	p.snapshot.pass(id)
	return p.StorePersistence.Snapshot(ctx, id)
}

func newGatedProcess(t *testing.T, root, path string) (*process, *gatedPersistence) {
	t.Helper()
	reg := session.NewRegistry()
	svc, err := sessionquery.New(sessionquery.DefaultConfig(), reg)
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(root, store.Options{})
	gp := &gatedPersistence{StorePersistence: sessionquery.NewStorePersistence(st)}
	svc.Mount(gp)
	ix, err := New(DefaultConfig(path), svc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return &process{reg: reg, svc: svc, ix: ix, st: st}, gp
}

// TestPendingSessionIsNeverDroppedWhileItsOwnerKeepsWriting pins the
// hand-off of a session that is live in process B and searched from
// process A: B parks it as pending whenever the journal names it, A
// indexes it and unparks it. Two interleavings used to lose B's latest
// flushed events for A until B closed the session: A unparking after B had
// already consumed the journal record of a newer flush, and B deciding not
// to re-park because it read the pending row just before A deleted it.
func TestPendingSessionIsNeverDroppedWhileItsOwnerKeepsWriting(t *testing.T) {
	for _, order := range []string{"owner commits first", "reader commits first"} {
		t.Run(order, func(t *testing.T) {
			dir := t.TempDir()
			root, path := filepath.Join(dir, "sessions"), filepath.Join(dir, "session-query.db")
			a, ga := newGatedProcess(t, root, path)
			b, gb := newGatedProcess(t, root, path)
			ctx := context.Background()
			l := b.startSession(t, "s")
			write := func(text string) {
				t.Helper()
				if _, err := l.Append(session.TypeUserMessage, userMsg(text)); err != nil {
					t.Fatal(err)
				}
				if err := l.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			search := func(p *process, token string) int {
				t.Helper()
				page, err := p.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "s", Query: token})
				if err != nil {
					t.Fatal(err)
				}
				return len(page.Items)
			}
			write("first tok0")
			search(b, "tok0") // B parks s
			if search(a, "tok0") != 1 {
				t.Fatal("A does not see tok0")
			}
			write("second tok1")
			search(b, "tok1") // B consumes the journal record; s stays parked

			// A takes the parked id and stops inside its inspection.
			inA := ga.inspect.arm("s")
			doneA := make(chan int)
			go func() { doneA <- search(a, "tok1") }()
			<-inA
			write("third tok2")
			if order == "owner commits first" {
				// B consumes tok2's record and commits while A is
				// still holding its older inspection.
				search(b, "tok2")
				ga.inspect.open()
				if n := <-doneA; n != 1 {
					t.Fatalf("A found tok1 %d times", n)
				}
			} else {
				// B reads the pending row, then waits while A
				// commits and unparks s; then B commits.
				inB := gb.snapshot.arm("s")
				doneB := make(chan int)
				go func() { doneB <- search(b, "tok2") }()
				<-inB
				ga.inspect.open()
				if n := <-doneA; n != 1 {
					t.Fatalf("A found tok1 %d times", n)
				}
				gb.snapshot.open()
				<-doneB
			}
			if n := search(a, "tok2"); n != 1 {
				t.Fatalf("A found B's flushed tok2 %d times while B keeps the session open", n)
			}
		})
	}
}
