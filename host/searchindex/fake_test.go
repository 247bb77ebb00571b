package searchindex

import (
	"context"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// fakeCall is one backend call as the fake saw it.
type fakeCall struct {
	op  string // "list" or "inspect"
	id  string
	ctx context.Context
}

// fakePersistence is a scriptable backend without a change feed, so the
// index runs the generic observation protocol against it. Hooks run inside
// a call before it answers: a test can block there, mutate the fake or the
// live registry, or watch ctx.
type fakePersistence struct {
	mu          sync.Mutex
	order       []string
	headers     map[string]session.Header
	logs        map[string][]session.Event
	revs        map[string]string
	listErr     error
	inspectErr  map[string]error
	listHook    func(ctx context.Context, n int)
	inspectHook func(ctx context.Context, id string)
	calls       []fakeCall
	dupList     bool
}

func newFakePersistence() *fakePersistence {
	return &fakePersistence{
		headers:    map[string]session.Header{},
		logs:       map[string][]session.Event{},
		revs:       map[string]string{},
		inspectErr: map[string]error{},
	}
}

// put stores a session under a revision.
func (f *fakePersistence) put(h session.Header, rev string, events []session.Event) *fakePersistence {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.headers[h.ID]; !ok {
		f.order = append(f.order, h.ID)
	}
	f.headers[h.ID] = h
	f.logs[h.ID] = events
	f.revs[h.ID] = rev
	return f
}

func (f *fakePersistence) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.headers, id)
	delete(f.logs, id)
	delete(f.revs, id)
	for i, x := range f.order {
		if x == id {
			f.order = append(f.order[:i:i], f.order[i+1:]...)
			break
		}
	}
}

func (f *fakePersistence) List(ctx context.Context) ([]sessionquery.PersistedSnapshot, error) {
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{op: "list", ctx: ctx})
	n := f.count("list")
	hook := f.listHook
	f.mu.Unlock()
	if hook != nil {
		hook(ctx, n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	out := make([]sessionquery.PersistedSnapshot, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, sessionquery.PersistedSnapshot{Header: f.headers[id].Clone(), Revision: f.revs[id]})
	}
	if f.dupList && len(out) > 0 {
		out = append(out, out[0])
	}
	return out, nil
}

func (f *fakePersistence) Inspect(ctx context.Context, id string) (session.Header, []session.Event, error) {
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{op: "inspect", id: id, ctx: ctx})
	hook := f.inspectHook
	f.mu.Unlock()
	if hook != nil {
		hook(ctx, id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.inspectErr[id]; err != nil {
		return session.Header{}, nil, err
	}
	h, ok := f.headers[id]
	if !ok {
		return session.Header{}, nil, errGone
	}
	return h.Clone(), session.CloneEvents(f.logs[id]), nil
}

func (f *fakePersistence) IsCorrupt(error) bool { return false }

// count is the number of calls of op so far; f.mu must be held.
func (f *fakePersistence) count(op string) int {
	n := 0
	for _, c := range f.calls {
		if c.op == op {
			n++
		}
	}
	return n
}

func (f *fakePersistence) n(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count(op)
}

func (f *fakePersistence) inspected() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if c.op == "inspect" {
			out = append(out, c.id)
		}
	}
	return out
}

func (f *fakePersistence) ctxs() []context.Context {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]context.Context, len(f.calls))
	for i, c := range f.calls {
		out[i] = c.ctx
	}
	return out
}

func (f *fakePersistence) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

type fakeError string

func (e fakeError) Error() string { return string(e) }

const errGone = fakeError("no such session")
