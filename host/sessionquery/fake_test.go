package sessionquery

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// corruptError is the fake backend's corruption failure.
type corruptError struct{ msg string }

func (e *corruptError) Error() string { return e.msg }

// call is one backend call as the fake saw it.
type call struct {
	op  string // "list" or "inspect"
	id  string
	ctx context.Context
}

// fakePersistence is a scriptable Persistence. Hooks run inside the call
// before it returns, so a test can block it, attach a live session, or
// watch ctx. Inspect returns the stored slices themselves, the worst case
// for the service's detached-copy guarantee.
type fakePersistence struct {
	mu          sync.Mutex
	order       []string
	headers     map[string]session.Header
	logs        map[string][]session.Event
	inspectHdr  map[string]session.Header // header Inspect returns instead
	listErr     error
	inspectErr  map[string]error
	listHook    func(ctx context.Context)
	inspectHook func(ctx context.Context, id string)
	calls       []call
	inflight    int
	peak        int
}

func newFake() *fakePersistence {
	return &fakePersistence{
		headers:    map[string]session.Header{},
		logs:       map[string][]session.Event{},
		inspectHdr: map[string]session.Header{},
		inspectErr: map[string]error{},
	}
}

func (f *fakePersistence) add(h session.Header, events ...session.Event) *fakePersistence {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.headers[h.ID]; !ok {
		f.order = append(f.order, h.ID)
	}
	f.headers[h.ID] = h
	if events == nil {
		events = []session.Event{}
	}
	f.logs[h.ID] = events
	return f
}

func (f *fakePersistence) List(ctx context.Context) ([]PersistedSnapshot, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{op: "list", ctx: ctx})
	hook := f.listHook
	f.mu.Unlock()
	if hook != nil {
		hook(ctx)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	out := make([]PersistedSnapshot, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, PersistedSnapshot{Header: f.headers[id].Clone(), Revision: id})
	}
	return out, nil
}

func (f *fakePersistence) Inspect(ctx context.Context, id string) (session.Header, []session.Event, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{op: "inspect", id: id, ctx: ctx})
	f.inflight++
	f.peak = max(f.peak, f.inflight)
	hook := f.inspectHook
	f.mu.Unlock()
	if hook != nil {
		hook(ctx, id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inflight--
	if err := f.inspectErr[id]; err != nil {
		return session.Header{}, nil, err
	}
	h, ok := f.headers[id]
	if !ok {
		return session.Header{}, nil, errors.New("no such session")
	}
	if alt, ok := f.inspectHdr[id]; ok {
		h = alt
	}
	return h, f.logs[id], nil
}

func (f *fakePersistence) IsCorrupt(err error) bool {
	var c *corruptError
	return errors.As(err, &c)
}

func (f *fakePersistence) callsOf(op string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.op == op {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakePersistence) inspectedIDs() []string {
	var ids []string
	for _, c := range f.callsOf("inspect") {
		ids = append(ids, c.id)
	}
	return ids
}

func (f *fakePersistence) peakInflight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peak
}

// fixture is a service over a fresh registry.
type fixture struct {
	svc  *Service
	live *session.Registry
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	reg := session.NewRegistry()
	svc, err := New(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return &fixture{svc: svc, live: reg}
}

func (fx *fixture) mount(t testing.TB, p Persistence) {
	t.Helper()
	unmount := fx.svc.Mount(p)
	t.Cleanup(unmount)
}

// attach makes a live session with the given header and user messages.
func (fx *fixture) attach(t testing.TB, h session.Header, texts ...string) *session.Live {
	t.Helper()
	l := newLive(t, h, nil)
	for _, text := range texts {
		mustAppend(t, l, session.TypeUserMessage, userText(text))
	}
	if err := fx.live.Attach(l); err != nil {
		t.Fatal(err)
	}
	return l
}

// userLog is a persisted log of user messages.
func userLog(texts ...string) []session.Event {
	out := make([]session.Event, len(texts))
	for i, text := range texts {
		out[i] = ev(i, session.TypeUserMessage, userText(text))
	}
	return out
}

func titleEvent(seq int, title string) session.Event {
	return ev(seq, session.TypeSessionTitle, session.SessionTitle{
		Title: title, MessageSeqs: []int{}, Source: rawJSONMust(`{"kind":"user"}`),
	})
}

func rawJSONMust(s string) []byte { return []byte(s) }

func ids(records []SessionRecord) []string { return recordIDs(records) }

func equalIDs(got []string, want ...string) bool { return slices.Equal(got, want) }
