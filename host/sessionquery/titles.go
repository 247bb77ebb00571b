package sessionquery

import (
	"context"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// ReadTitle returns the folded title of a session, or nil when it has none.
func (s *Service) ReadTitle(ctx context.Context, id string) (*TitleSnapshot, error) {
	obs, err := s.ReadTitleSnapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	return obs.Title, nil
}

// ReadTitleSnapshot returns a session's header with its folded title (a
// title batch of one whose rejection is returned as the error).
func (s *Service) ReadTitleSnapshot(ctx context.Context, id string) (TitleObservation, error) {
	results, err := s.ReadTitleSnapshots(ctx, []string{id})
	if err != nil {
		return TitleObservation{}, err
	}
	if r := results[0]; r.Status == Rejected {
		return TitleObservation{}, r.Reason
	}
	return *results[0].Value, nil
}

// ReadTitleSnapshots reads the titles of many sessions with one persistence
// listing and at most PersistedInspectConcurrency concurrent inspections.
// Ids are deduplicated (first occurrence wins the position) and each gets its
// own fulfilled or rejected result, so one broken log never fails the batch.
// Cancellation stops further inspections, waits for the started ones, and
// fails the whole call with context.Cause(ctx).
func (s *Service) ReadTitleSnapshots(ctx context.Context, ids []string) ([]TitleResult, error) {
	ids = dedupe(ids)
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	fast, err := s.titlesFromCatalog(ctx, ids)
	if err != nil {
		return nil, err
	}
	var rest []string
	for _, id := range ids {
		if _, ok := fast[id]; !ok {
			rest = append(rest, id)
		}
	}
	slow := map[string]TitleResult{}
	if len(rest) > 0 {
		results, err := s.readTitlesSlowly(ctx, rest)
		if err != nil {
			return nil, err
		}
		for _, r := range results {
			slow[r.SessionID] = r
		}
	}
	out := make([]TitleResult, len(ids))
	for i, id := range ids {
		if r, ok := fast[id]; ok {
			out[i] = r
		} else {
			out[i] = slow[id]
		}
	}
	return out, cancelled(ctx)
}

// readTitlesSlowly reads titles from the logs themselves: for ids the
// catalog does not hold, or when no catalog is installed.
func (s *Service) readTitlesSlowly(ctx context.Context, ids []string) ([]TitleResult, error) {
	projected, err := projectMany(ctx, s, ids, projectTitle)
	if err != nil {
		return nil, err
	}
	out := make([]TitleResult, len(projected))
	for i, p := range projected {
		out[i] = TitleResult{SessionID: p.id, Status: Fulfilled, Reason: p.reason}
		if p.reason != nil {
			out[i].Status = Rejected
			continue
		}
		v := p.value
		out[i].Value = &v
	}
	return out, nil
}

// projectTitle keeps a copy of the header and the folded title, nothing of
// the log itself.
func projectTitle(h session.Header, events []session.Event) (TitleObservation, error) {
	title, err := session.FoldTitle(events)
	if err != nil {
		return TitleObservation{}, err
	}
	return TitleObservation{Session: h.Clone(), Title: title}, nil
}

// projection is the outcome of projecting one id: a value or a reason.
type projection[V any] struct {
	id     string
	value  V
	reason error
}

// projectMany resolves each unique id live-first and runs project on its
// source at once, so a worker releases one full log before it inspects the
// next. project must copy whatever it keeps: the events it sees are borrowed.
func projectMany[V any](ctx context.Context, s *Service, ids []string,
	project func(session.Header, []session.Event) (V, error)) ([]projection[V], error) {
	ids = dedupe(ids)
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	out := make([]projection[V], len(ids))
	projectInto := func(i int, src source) {
		out[i].value, out[i].reason = project(src.header, src.events)
	}
	var unresolved []int
	for i, id := range ids {
		out[i].id = id
		if l, ok := s.live.Get(id); ok {
			projectInto(i, liveSource(l))
		} else {
			unresolved = append(unresolved, i)
		}
	}
	if len(unresolved) == 0 {
		return out, cancelled(ctx)
	}
	p := s.persistence()
	if p == nil {
		for _, i := range unresolved {
			out[i].reason = notFound(ids[i])
		}
		return out, cancelled(ctx)
	}
	snaps, err := listPersisted(ctx, p)
	if err == nil {
		err = cancelled(ctx)
	}
	if err != nil {
		if cause := cancelled(ctx); cause != nil {
			return nil, cause
		}
		for _, i := range unresolved {
			out[i].reason = err
		}
		return out, nil
	}
	listed := make(map[string]session.Header, len(snaps))
	for _, snap := range snaps {
		listed[snap.Header.ID] = snap.Header
	}

	resolve := func(i int) {
		id := ids[i]
		lh, ok := listed[id]
		if !ok {
			if l, live := s.live.Get(id); live {
				projectInto(i, liveSource(l))
			} else {
				out[i].reason = notFound(id)
			}
			return
		}
		h, events, err := inspectPersisted(ctx, p, id)
		if err != nil {
			out[i].reason = err
			return
		}
		if l, live := s.live.Get(id); live {
			projectInto(i, liveSource(l))
			return
		}
		if err := checkCompatible(h, lh); err != nil {
			out[i].reason = err
			return
		}
		projectInto(i, source{header: h, events: events})
	}

	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	claim := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		// A cancelled batch starts no further inspection.
		if ctx.Err() != nil || next >= len(unresolved) {
			return 0, false
		}
		next++
		return unresolved[next-1], true
	}
	workers := min(s.cfg.PersistedInspectConcurrency, len(unresolved))
	for range workers {
		wg.Go(func() {
			for i, ok := claim(); ok; i, ok = claim() {
				resolve(i)
			}
		})
	}
	wg.Wait()
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
