package sessionquery

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// ListSessions returns the whole logical corpus, newest first (createdAt
// descending, then id). It lists headers only: no log is read and no title
// is folded. ctx reaches the persistence listing.
func (s *Service) ListSessions(ctx context.Context) ([]SessionRecord, error) {
	return s.listSessions(ctx)
}

// FilterSessions validates and copies filters (the caller may reuse them at
// once), lists the corpus and keeps the records every clause accepts, in
// listing order.
func (s *Service) FilterSessions(ctx context.Context, filters []SessionFilter) ([]SessionRecord, error) {
	if err := ValidateSessionFilters(filters); err != nil {
		return nil, err
	}
	filters = CopySessionFilters(filters)
	records, err := s.candidates(ctx, filters)
	if err != nil {
		return nil, err
	}
	return FilterSessionRecords(records, filters)
}

// candidates is the corpus a filter call needs: with a catalog and an id
// clause (every authorization check has one), only those ids' catalog
// rows, in listing order; otherwise the whole corpus.
func (s *Service) candidates(ctx context.Context, filters []SessionFilter) ([]SessionRecord, error) {
	c := s.catalog()
	var ids []string
	for _, f := range filters {
		if f.Kind == KindID && (ids == nil || len(f.Values) < len(ids)) {
			ids = f.Values
		}
	}
	if c == nil || ids == nil {
		return s.listSessions(ctx)
	}
	if len(ids) == 0 {
		return []SessionRecord{}, cancelled(ctx)
	}
	sums, err := c.SummariesOf(ctx, ids)
	if err != nil {
		if cause := cancelled(ctx); cause != nil {
			return nil, cause
		}
		return s.listSessions(ctx) // the logs themselves answer
	}
	records := make([]SessionRecord, 0, len(sums))
	for _, sum := range sums {
		records = append(records, SessionRecord{Header: sum.Header, Live: sum.Live, Persisted: sum.Persisted})
	}
	sortNewestFirst(records)
	return records, nil
}

// ReadSession returns the whole log of a session after the replay validation
// a resume would apply. The validator's own error is returned as is, and the
// session is never made live.
func (s *Service) ReadSession(ctx context.Context, id string) (LogSnapshot, error) {
	src, err := s.load(ctx, id)
	if err != nil {
		return LogSnapshot{}, err
	}
	if err := session.ValidateLog(src.header, src.events); err != nil {
		return LogSnapshot{}, err
	}
	return LogSnapshot{Session: src.header.Clone(), Events: session.CloneEvents(src.events)}, nil
}

// ListEvents returns every event's metadata with its surface
// classification, in ascending seq order. A fold violation is
// INVALID_SURFACE.
func (s *Service) ListEvents(ctx context.Context, id string) ([]EventRecord, error) {
	src, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return ClassifyEvents(src.header.ID, src.events)
}

// FilterEvents validates and copies filters, then returns the semantic
// documents of the session that every clause accepts, in ascending seq
// order. It is the only route to the literal text scan.
func (s *Service) FilterEvents(ctx context.Context, id string, filters []EventFilter) ([]Document, error) {
	if err := ValidateEventFilters(filters); err != nil {
		return nil, err
	}
	filters = CopyEventFilters(filters)
	src, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	docs, err := BuildDocuments(src.header.ID, src.events)
	if err != nil {
		return nil, err
	}
	return FilterDocuments(docs, filters)
}

// ReadSurface returns the current surface of a session in fold order, with
// the last seq of the log it was folded from (nil for an empty log).
func (s *Service) ReadSurface(ctx context.Context, id string) (SurfaceSnapshot, error) {
	src, err := s.load(ctx, id)
	if err != nil {
		return SurfaceSnapshot{}, err
	}
	f, err := foldEvents(src.events)
	if err != nil {
		return SurfaceSnapshot{}, err
	}
	nodes := f.Nodes()
	out := SurfaceSnapshot{Session: src.header.Clone(), Events: make([]session.Event, 0, len(nodes))}
	if n := len(src.events); n > 0 {
		last := src.events[n-1].Seq
		out.CapturedThroughSeq = &last
	}
	for _, seq := range nodes {
		out.Events = append(out.Events, src.events[seq].Clone())
	}
	return out, nil
}

// ReadEvent returns the event at seq with up to before events ahead of it
// and after events behind it (each defaulting to 0, at most ReadWindowMax).
// The window is validated before anything is read, and the surface is not
// validated at all: a raw read must work on a log whose surface is broken.
func (s *Service) ReadEvent(ctx context.Context, id string, seq int, before, after *int) (EventWindow, error) {
	b, err := s.windowSide("before", before)
	if err != nil {
		return EventWindow{}, err
	}
	a, err := s.windowSide("after", after)
	if err != nil {
		return EventWindow{}, err
	}
	src, err := s.load(ctx, id)
	if err != nil {
		return EventWindow{}, err
	}
	target, err := eventAt(src, id, seq)
	if err != nil {
		return EventWindow{}, err
	}
	start := max(0, seq-b)
	end := min(len(src.events)-1, seq+a)
	return EventWindow{
		Session:  src.header.Clone(),
		Target:   target.Clone(),
		Events:   session.CloneEvents(src.events[start : end+1]),
		StartSeq: start,
		EndSeq:   end,
	}, nil
}

func (s *Service) windowSide(name string, v *int) (int, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 0 || *v > s.cfg.ReadWindowMax {
		return 0, Errorf(CodeInvalidWindow, "%s must be an integer between 0 and %d", name, s.cfg.ReadWindowMax)
	}
	return *v, nil
}

// eventAt returns the event at seq or EVENT_NOT_FOUND.
func eventAt(src source, id string, seq int) (session.Event, error) {
	if seq < 0 || seq >= len(src.events) || src.events[seq].Seq != seq {
		return session.Event{}, Errorf(CodeEventNotFound, `session "%s" has no event at seq %d`, id, seq)
	}
	return src.events[seq], nil
}
