package sessionquery

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// fakeService is a scripted session-query service. Each method records the
// call (name, context, arguments) and runs its script; a method without a
// script fails the test, so every test states exactly which calls it
// expects.
type fakeService struct {
	t testing.TB
	// fallback serves the methods without a script, so the fake can record
	// the calls made to a real service.
	fallback Service

	mu    sync.Mutex
	calls []fakeCall

	filterSessions     func(ctx context.Context, filters []sq.SessionFilter) ([]sq.SessionRecord, error)
	readTitleSnapshots func(ctx context.Context, ids []string) ([]sq.TitleResult, error)
	searchSessions     func(ctx context.Context, req sq.SessionSearchRequest) (sq.SessionSearchPage, error)
	searchEvents       func(ctx context.Context, req sq.EventSearchRequest) (sq.EventSearchPage, error)
	traceSession       func(ctx context.Context, id string) (sq.LineageTrace, error)
	traceEvent         func(ctx context.Context, id string, seq int) (sq.EventTraceObservation, error)
	readEvent          func(ctx context.Context, id string, seq int, before, after *int) (sq.EventWindow, error)
}

type fakeCall struct {
	name string
	ctx  context.Context
	arg  any
}

func newFake(t testing.TB) *fakeService { return &fakeService{t: t} }

func (f *fakeService) record(name string, ctx context.Context, arg any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{name: name, ctx: ctx, arg: arg})
}

// names returns the recorded call names in order.
func (f *fakeService) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.calls))
	for i, c := range f.calls {
		out[i] = c.name
	}
	return out
}

// callsOf returns the recorded calls of one method.
func (f *fakeService) callsOf(name string) []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeCall
	for _, c := range f.calls {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeService) count(name string) int { return len(f.callsOf(name)) }

func (f *fakeService) unexpected(name string) error {
	f.t.Errorf("unexpected %s call", name)
	return fmt.Errorf("unexpected %s call", name)
}

func (f *fakeService) FilterSessions(ctx context.Context, filters []sq.SessionFilter) ([]sq.SessionRecord, error) {
	f.record("FilterSessions", ctx, sq.CopySessionFilters(filters))
	if f.filterSessions == nil {
		if f.fallback != nil {
			return f.fallback.FilterSessions(ctx, filters)
		}
		return nil, f.unexpected("FilterSessions")
	}
	return f.filterSessions(ctx, filters)
}

func (f *fakeService) ReadTitleSnapshots(ctx context.Context, ids []string) ([]sq.TitleResult, error) {
	f.record("ReadTitleSnapshots", ctx, slices.Clone(ids))
	if f.readTitleSnapshots == nil {
		if f.fallback != nil {
			return f.fallback.ReadTitleSnapshots(ctx, ids)
		}
		return nil, f.unexpected("ReadTitleSnapshots")
	}
	return f.readTitleSnapshots(ctx, ids)
}

func (f *fakeService) SearchSessions(ctx context.Context, req sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
	f.record("SearchSessions", ctx, req)
	if f.searchSessions == nil {
		if f.fallback != nil {
			return f.fallback.SearchSessions(ctx, req)
		}
		return sq.SessionSearchPage{}, f.unexpected("SearchSessions")
	}
	return f.searchSessions(ctx, req)
}

func (f *fakeService) SearchEvents(ctx context.Context, req sq.EventSearchRequest) (sq.EventSearchPage, error) {
	f.record("SearchEvents", ctx, req)
	if f.searchEvents == nil {
		if f.fallback != nil {
			return f.fallback.SearchEvents(ctx, req)
		}
		return sq.EventSearchPage{}, f.unexpected("SearchEvents")
	}
	return f.searchEvents(ctx, req)
}

func (f *fakeService) TraceSession(ctx context.Context, id string) (sq.LineageTrace, error) {
	f.record("TraceSession", ctx, id)
	if f.traceSession == nil {
		if f.fallback != nil {
			return f.fallback.TraceSession(ctx, id)
		}
		return sq.LineageTrace{}, f.unexpected("TraceSession")
	}
	return f.traceSession(ctx, id)
}

func (f *fakeService) TraceEvent(ctx context.Context, id string, seq int) (sq.EventTraceObservation, error) {
	f.record("TraceEvent", ctx, [2]any{id, seq})
	if f.traceEvent == nil {
		if f.fallback != nil {
			return f.fallback.TraceEvent(ctx, id, seq)
		}
		return sq.EventTraceObservation{}, f.unexpected("TraceEvent")
	}
	return f.traceEvent(ctx, id, seq)
}

type readEventArgs struct {
	id            string
	seq           int
	before, after *int
}

func (f *fakeService) ReadEvent(ctx context.Context, id string, seq int, before, after *int) (sq.EventWindow, error) {
	f.record("ReadEvent", ctx, readEventArgs{id, seq, before, after})
	if f.readEvent == nil {
		if f.fallback != nil {
			return f.fallback.ReadEvent(ctx, id, seq, before, after)
		}
		return sq.EventWindow{}, f.unexpected("ReadEvent")
	}
	return f.readEvent(ctx, id, seq, before, after)
}

// corpus is a fixed set of session records the fake's default scripts
// serve: filters through the service's own matcher, titles from a map.
type corpus struct {
	records []sq.SessionRecord
	titles  map[string]string
}

func (c *corpus) add(h session.Header, title string) {
	c.records = append(c.records, sq.SessionRecord{Header: h, Live: true})
	if title != "" {
		if c.titles == nil {
			c.titles = map[string]string{}
		}
		c.titles[h.ID] = title
	}
}

func (c *corpus) header(id string) (session.Header, bool) {
	for _, r := range c.records {
		if r.Header.ID == id {
			return r.Header, true
		}
	}
	return session.Header{}, false
}

func (c *corpus) filter(_ context.Context, filters []sq.SessionFilter) ([]sq.SessionRecord, error) {
	return sq.FilterSessionRecords(c.records, filters)
}

func (c *corpus) readTitles(_ context.Context, ids []string) ([]sq.TitleResult, error) {
	var out []sq.TitleResult
	for _, id := range dedupe(ids) {
		h, ok := c.header(id)
		if !ok {
			out = append(out, sq.TitleResult{SessionID: id, Status: sq.Rejected,
				Reason: sq.Errorf(sq.CodeSessionNotFound, `session "%s" not found`, id)})
			continue
		}
		obs := &sq.TitleObservation{Session: h}
		if t, ok := c.titles[id]; ok {
			obs.Title = &sq.TitleSnapshot{Title: t, MessageSeqs: []int{0}}
		}
		out = append(out, sq.TitleResult{SessionID: id, Status: sq.Fulfilled, Value: obs})
	}
	return out, nil
}

// serve installs the corpus as the fake's filter and title scripts.
func (f *fakeService) serve(c *corpus) *fakeService {
	f.filterSessions = c.filter
	f.readTitleSnapshots = c.readTitles
	return f
}

// blocker is a script step that parks a service call until the call's
// context ends and then until the test releases it, so a test can prove
// the tool awaits a started call instead of abandoning it.
type blocker struct {
	entered  chan struct{}
	ctxDone  chan struct{}
	release  chan struct{}
	once     sync.Once
	doneOnce sync.Once
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan struct{}), ctxDone: make(chan struct{}), release: make(chan struct{})}
}

// wait is called by the script: it signals entry, waits for ctx, signals
// that, and waits for release.
func (b *blocker) wait(ctx context.Context) {
	b.once.Do(func() { close(b.entered) })
	<-ctx.Done()
	b.doneOnce.Do(func() { close(b.ctxDone) })
	<-b.release
}

// hostile errors for the sanitizer tests.

// cyclicError's cause chain loops back to itself through another error.
type cyclicError struct {
	msg   string
	cause error
}

func (e *cyclicError) Error() string { return e.msg }
func (e *cyclicError) Unwrap() error { return e.cause }

func newCycle(a, b string) error {
	x := &cyclicError{msg: a}
	y := &cyclicError{msg: b, cause: x}
	x.cause = y
	return x
}

// panickyError panics when printed.
type panickyError struct{}

func (panickyError) Error() string { panic("secret-from-panicking-error-method") }

// panickyUnwrap panics when its cause is asked for.
type panickyUnwrap struct{ msg string }

func (e *panickyUnwrap) Error() string { return e.msg }
func (e *panickyUnwrap) Unwrap() error { panic("secret-from-unwrap") }

// panickyCode is a coded error whose code getter panics.
type panickyCode struct{ msg string }

func (e *panickyCode) Error() string     { return e.msg }
func (e *panickyCode) ErrorCode() string { panic("secret-from-code-getter") }
func (e *panickyCode) ErrorName() string { return "HostileError" }

// codedError is a coded error with an arbitrary code.
type codedError struct{ code, msg string }

func (e *codedError) Error() string     { return e.msg }
func (e *codedError) ErrorCode() string { return e.code }
func (e *codedError) ErrorName() string { return "HarnessError" }
