package sessiontest

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Call is one backend call as the fake saw it.
type Call struct {
	Op  string // "list" or "inspect"
	ID  string // the inspected session
	Ctx context.Context
}

// Listed is one entry of a List answer.
type Listed struct {
	Header   session.Header
	Revision string
}

// CorruptError is the failure IsCorrupt recognises as a corrupt log.
type CorruptError struct{ Msg string }

func (e *CorruptError) Error() string { return e.Msg }

// ErrGone is Inspect's answer for a session the fake does not hold.
var ErrGone = errors.New("no such session")

// Backend is a scriptable persisted-session backend without a change feed:
// sessions in insertion order, each with a header, a log and a revision.
// Hooks run inside a call before it answers, so a test can block there,
// mutate the fake or a live registry, or watch ctx. The exported knobs are
// set by the test between calls; everything else is safe for concurrent
// use.
type Backend struct {
	// ListErr fails every List.
	ListErr error
	// InspectErr fails Inspect of a session.
	InspectErr map[string]error
	// ListHook runs in List with the number of List calls so far.
	ListHook func(ctx context.Context, n int)
	// InspectHook runs in Inspect.
	InspectHook func(ctx context.Context, id string)
	// DupList makes List name its first session twice.
	DupList bool
	// Shared makes Inspect return the stored header and log themselves
	// rather than copies: the worst case for a reader's detached-copy
	// guarantee.
	Shared bool

	mu         sync.Mutex
	order      []string
	headers    map[string]session.Header
	logs       map[string][]session.Event
	revs       map[string]string
	inspectHdr map[string]session.Header
	calls      []Call
	inflight   int
	peak       int
}

// New returns an empty backend.
func New() *Backend {
	return &Backend{
		InspectErr: map[string]error{},
		headers:    map[string]session.Header{},
		logs:       map[string][]session.Event{},
		revs:       map[string]string{},
		inspectHdr: map[string]session.Header{},
	}
}

// Put stores a session under a revision.
func (b *Backend) Put(h session.Header, rev string, events []session.Event) *Backend {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.headers[h.ID]; !ok {
		b.order = append(b.order, h.ID)
	}
	b.headers[h.ID] = h
	b.logs[h.ID] = events
	b.revs[h.ID] = rev
	return b
}

// Add stores a session whose revision is its ID (it never changes).
func (b *Backend) Add(h session.Header, events ...session.Event) *Backend {
	if events == nil {
		events = []session.Event{}
	}
	return b.Put(h, h.ID, events)
}

// Remove forgets a session.
func (b *Backend) Remove(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.headers, id)
	delete(b.logs, id)
	delete(b.revs, id)
	b.order = slices.DeleteFunc(b.order, func(x string) bool { return x == id })
}

// InspectHeader makes Inspect of id answer h instead of the listed header.
func (b *Backend) InspectHeader(id string, h session.Header) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inspectHdr[id] = h
}

// Log returns the stored log of id itself (not a copy).
func (b *Backend) Log(id string) []session.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.logs[id]
}

// List answers every session's header and revision, in insertion order.
func (b *Backend) List(ctx context.Context) ([]Listed, error) {
	b.mu.Lock()
	b.calls = append(b.calls, Call{Op: "list", Ctx: ctx})
	n := b.count("list")
	hook := b.ListHook
	b.mu.Unlock()
	if hook != nil {
		hook(ctx, n)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ListErr != nil {
		return nil, b.ListErr
	}
	out := make([]Listed, 0, len(b.order)+1)
	for _, id := range b.order {
		out = append(out, Listed{Header: b.headers[id].Clone(), Revision: b.revs[id]})
	}
	if b.DupList && len(out) > 0 {
		out = append(out, out[0])
	}
	return out, nil
}

// Inspect reads one session's header and log.
func (b *Backend) Inspect(ctx context.Context, id string) (session.Header, []session.Event, error) {
	b.mu.Lock()
	b.calls = append(b.calls, Call{Op: "inspect", ID: id, Ctx: ctx})
	b.inflight++
	b.peak = max(b.peak, b.inflight)
	hook := b.InspectHook
	b.mu.Unlock()
	if hook != nil {
		hook(ctx, id)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inflight--
	if err := b.InspectErr[id]; err != nil {
		return session.Header{}, nil, err
	}
	h, ok := b.headers[id]
	if !ok {
		return session.Header{}, nil, ErrGone
	}
	if alt, ok := b.inspectHdr[id]; ok {
		h = alt
	}
	if b.Shared {
		return h, b.logs[id], nil
	}
	return h.Clone(), session.CloneEvents(b.logs[id]), nil
}

// IsCorrupt reports whether err is a *CorruptError.
func (b *Backend) IsCorrupt(err error) bool {
	var c *CorruptError
	return errors.As(err, &c)
}

// count is the number of calls of op so far; b.mu must be held.
func (b *Backend) count(op string) int {
	n := 0
	for _, c := range b.calls {
		if c.Op == op {
			n++
		}
	}
	return n
}

// Calls returns every call so far, oldest first.
func (b *Backend) Calls() []Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// CallsOf returns the calls of op ("list" or "inspect") so far.
func (b *Backend) CallsOf(op string) []Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Call
	for _, c := range b.calls {
		if c.Op == op {
			out = append(out, c)
		}
	}
	return out
}

// N is the number of calls of op so far.
func (b *Backend) N(op string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count(op)
}

// Inspected returns the sessions inspected so far, in call order.
func (b *Backend) Inspected() []string {
	var out []string
	for _, c := range b.CallsOf("inspect") {
		out = append(out, c.ID)
	}
	return out
}

// Contexts returns the contexts of every call so far.
func (b *Backend) Contexts() []context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]context.Context, len(b.calls))
	for i, c := range b.calls {
		out[i] = c.Ctx
	}
	return out
}

// PeakInflight is the most Inspect calls that ran at once.
func (b *Backend) PeakInflight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// Reset forgets the calls so far.
func (b *Backend) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = nil
}

// ListAs is List with each entry made into a caller's own snapshot type,
// for the adapter that turns a Backend into that caller's backend interface.
func ListAs[T any](ctx context.Context, b *Backend, mk func(h session.Header, revision string) T) ([]T, error) {
	listed, err := b.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(listed))
	for i, l := range listed {
		out[i] = mk(l.Header, l.Revision)
	}
	return out, nil
}
