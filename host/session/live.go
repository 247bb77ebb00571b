package session

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/hook"
)

// Sink receives a live session's events for persistence. Append may buffer;
// Flush is the durability barrier: when it returns nil, every event appended
// before it is on stable storage.
type Sink interface {
	Append(events ...Event) error
	Flush() error
	Close() error
}

// Live is a session in memory: an immutable header and an append-only event
// log, optionally mirrored to a Sink. Appended events are never mutated, so
// slices returned by Snapshot may be read without copying the events, but
// must not be modified.
type Live struct {
	mu              sync.RWMutex
	emitMu          sync.Mutex
	header          Header
	events          []Event
	sink            Sink
	now             func() time.Time
	nonce           string
	closed          bool
	obs             hook.Observers[Event]
	onObserverPanic func(any)
}

// LiveOptions configures NewLive.
type LiveOptions struct {
	Sink Sink             // nil: memory only
	Now  func() time.Time // nil: time.Now
	// OnObserverPanic receives the value of a panicking observer.
	OnObserverPanic func(any)
}

// NewLive returns a live session with the given header and existing events
// (for example a loaded log or a fork seed). The events must already form a
// contiguous log; they are not re-sent to the sink.
func NewLive(h Header, events []Event, opts LiveOptions) *Live {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Live{
		header:          h.Clone(),
		events:          append([]Event(nil), events...),
		sink:            opts.Sink,
		now:             now,
		nonce:           hex.EncodeToString(b[:]),
		onObserverPanic: opts.OnObserverPanic,
	}
}

// ID returns the session id.
func (l *Live) ID() string { return l.header.ID }

// Header returns a copy of the header.
func (l *Live) Header() Header { return l.header.Clone() }

// Len returns the number of events.
func (l *Live) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.events)
}

// Revision identifies the current content of this live instance: it changes
// on every append and differs between two Live values with the same id.
func (l *Live) Revision() string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return fmt.Sprintf("%s:%d", l.nonce, len(l.events))
}

// Snapshot returns a copy of the header and of the event slice. The events
// share payload bytes with the log; use CloneEvents for a detached copy.
func (l *Live) Snapshot() (Header, []Event) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.header.Clone(), append([]Event(nil), l.events...)
}

// Events returns the events with seq >= from (shared payloads, see Snapshot).
func (l *Live) Events(from int) []Event {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if from < 0 {
		from = 0
	}
	if from >= len(l.events) {
		return nil
	}
	return append([]Event(nil), l.events[from:]...)
}

// AppendOption customizes an appended event.
type AppendOption func(*Event)

// WithSources sets sourceEventSeqs.
func WithSources(seqs ...int) AppendOption {
	return func(e *Event) { e.SourceEventSeqs = Sources(seqs...) }
}

// WithSurface sets surfaceOp (OpAppend or OpReplace(start, end)).
func WithSurface(op json.RawMessage) AppendOption {
	return func(e *Event) { e.SurfaceOp = op }
}

// Append encodes data with Marshal and appends an event of type typ, assigning
// its seq and time. Surface types default to surfaceOp "append".
func (l *Live) Append(typ string, data any, opts ...AppendOption) (Event, error) {
	raw, err := Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("append %s: %w", typ, err)
	}
	e := Event{Type: typ, Data: raw}
	if IsSurfaceType(typ) {
		e.SurfaceOp = OpAppend
	}
	for _, o := range opts {
		o(&e)
	}
	return l.AppendEvent(e)
}

// AppendEvent appends e, overwriting its seq and time. Observers are called
// after the event is in the log, in seq order, on the appending goroutine;
// they must not append to the same session.
func (l *Live) AppendEvent(e Event) (Event, error) {
	l.emitMu.Lock()
	defer l.emitMu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return Event{}, fmt.Errorf("session %s is closed", l.header.ID)
	}
	e.Seq = len(l.events)
	e.Time = l.now().UnixMilli()
	if len(e.Data) == 0 {
		e.Data = json.RawMessage("{}")
	}
	if l.sink != nil {
		if err := l.sink.Append(e); err != nil {
			l.mu.Unlock()
			return Event{}, fmt.Errorf("persist %s event %d of session %s: %w", e.Type, e.Seq, l.header.ID, err)
		}
	}
	l.events = append(l.events, e)
	l.mu.Unlock()
	l.obs.Emit(e, l.onObserverPanic)
	return e, nil
}

// Flush is the durability barrier; it is a no-op without a sink.
func (l *Live) Flush() error {
	l.mu.RLock()
	sink := l.sink
	l.mu.RUnlock()
	if sink == nil {
		return nil
	}
	return sink.Flush()
}

// Subscribe registers fn for every event appended from now on.
func (l *Live) Subscribe(fn func(Event)) (unsubscribe func()) { return l.obs.Subscribe(fn) }

// Close flushes and closes the sink; later appends fail. It is idempotent.
func (l *Live) Close() error {
	l.emitMu.Lock()
	defer l.emitMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.sink == nil {
		return nil
	}
	ferr := l.sink.Flush()
	cerr := l.sink.Close()
	if ferr != nil {
		return ferr
	}
	return cerr
}
