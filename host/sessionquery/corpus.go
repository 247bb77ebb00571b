package sessionquery

import (
	"context"
	"slices"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// source is one observation of a session: a header and the events that
// belong with it. Its events may be shared with the live log or the backend,
// so they are only read; whatever a method returns is cloned from them.
type source struct {
	header session.Header
	events []session.Event
}

// cancelled returns the cancellation cause once ctx is done. Every read
// rejects with exactly this value, never with a wrapped or typed error.
func cancelled(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

func liveSource(l *session.Live) source {
	h, events := l.Snapshot()
	return source{header: h, events: events}
}

// listSessions builds the whole logical corpus, headers only: the persisted
// listing overlaid by the live sessions, newest first.
func (s *Service) listSessions(ctx context.Context) ([]SessionRecord, error) {
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	if c := s.catalog(); c != nil {
		records, err := s.catalogRecords(ctx, c)
		if err == nil || cancelled(ctx) != nil {
			return records, err
		}
		// A catalog that cannot answer leaves the listing to the logs.
	}
	records, _, err := s.listCorpus(ctx)
	return records, err
}

// listCorpus lists the corpus from the persistence itself, with the size
// of each persisted log.
func (s *Service) listCorpus(ctx context.Context) ([]SessionRecord, map[string]int64, error) {
	var snaps []PersistedSnapshot
	if p := s.persistence(); p != nil {
		var err error
		if snaps, err = listPersisted(ctx, p); err != nil {
			return nil, nil, err
		}
	}
	if err := cancelled(ctx); err != nil {
		return nil, nil, err
	}
	sizes := make(map[string]int64, len(snaps))
	for _, snap := range snaps {
		sizes[snap.Header.ID] = snap.Size
	}
	records := make([]SessionRecord, 0, len(snaps))
	index := make(map[string]int, len(snaps))
	put := func(r SessionRecord) {
		if i, ok := index[r.Header.ID]; ok {
			records[i] = r
			return
		}
		index[r.Header.ID] = len(records)
		records = append(records, r)
	}
	for _, snap := range snaps {
		put(SessionRecord{Header: snap.Header.Clone(), Persisted: true})
	}
	for _, l := range s.live.List() {
		h := l.Header()
		i, durable := index[h.ID]
		if durable {
			if err := checkCompatible(h, records[i].Header); err != nil {
				return nil, nil, err
			}
		}
		put(SessionRecord{Header: h, Live: true, Persisted: durable})
	}
	sortNewestFirst(records)
	return records, sizes, nil
}

// load resolves one exact source, live first. A live id never consults
// persistence, so a broken backend cannot hide current history.
func (s *Service) load(ctx context.Context, id string) (source, error) {
	if err := cancelled(ctx); err != nil {
		return source{}, err
	}
	if l, ok := s.live.Get(id); ok {
		return liveSource(l), cancelled(ctx)
	}
	p := s.persistence()
	if p == nil {
		return source{}, notFound(id)
	}
	snap, ok, err := findPersisted(ctx, p, id)
	if err != nil {
		return source{}, err
	}
	if err := cancelled(ctx); err != nil {
		return source{}, err
	}
	listed := snap.Header
	if !ok {
		return source{}, notFound(id)
	}
	h, events, err := inspectPersisted(ctx, p, id)
	if err != nil {
		return source{}, err
	}
	if err := cancelled(ctx); err != nil {
		return source{}, err
	}
	// The session may have become live while the log was read; the live
	// copy is authoritative and may already hold more events.
	if l, ok := s.live.Get(id); ok {
		return liveSource(l), cancelled(ctx)
	}
	if err := checkCompatible(h, listed); err != nil {
		return source{}, err
	}
	return source{header: h.Clone(), events: events}, cancelled(ctx)
}

func findSnapshot(snaps []PersistedSnapshot, id string) (session.Header, bool) {
	// The last listing of an id wins, as it does when the corpus is built.
	for i := len(snaps) - 1; i >= 0; i-- {
		if snaps[i].Header.ID == id {
			return snaps[i].Header, true
		}
	}
	return session.Header{}, false
}

func listPersisted(ctx context.Context, p Persistence) ([]PersistedSnapshot, error) {
	snaps, err := p.List(ctx)
	if err != nil {
		if cause := cancelled(ctx); cause != nil {
			return nil, cause
		}
		return nil, Wrap(CodePersistenceFailed, err, "session persistence listing failed: %s", errorMessage(err))
	}
	return snaps, nil
}

func inspectPersisted(ctx context.Context, p Persistence, id string) (session.Header, []session.Event, error) {
	h, events, err := p.Inspect(ctx, id)
	if err != nil {
		if cause := cancelled(ctx); cause != nil {
			return session.Header{}, nil, cause
		}
		if p.IsCorrupt(err) {
			return session.Header{}, nil, Wrap(CodeCorruptSession, err, `stored session "%s" is corrupt: %s`, id, errorMessage(err))
		}
		return session.Header{}, nil, Wrap(CodePersistenceFailed, err, `failed to inspect session "%s": %s`, id, errorMessage(err))
	}
	return h, events, nil
}

func errorMessage(err error) string {
	if msg := err.Error(); msg != "" {
		return msg
	}
	return "unknown error"
}

func notFound(id string) *Error {
	return Errorf(CodeSessionNotFound, `session "%s" not found`, id)
}

// sortNewestFirst orders records by createdAt descending, then by id in
// locale-aware order (JavaScript's localeCompare, root locale).
func sortNewestFirst(records []SessionRecord) {
	c := collate.New(language.Und)
	slices.SortStableFunc(records, func(a, b SessionRecord) int {
		if a.Header.CreatedAt != b.Header.CreatedAt {
			if a.Header.CreatedAt > b.Header.CreatedAt {
				return -1
			}
			return 1
		}
		return c.CompareString(a.Header.ID, b.Header.ID)
	})
}

// sortOldestFirst orders records by createdAt ascending, then by id in
// locale-aware order; lineage children are listed this way.
func sortOldestFirst(c *collate.Collator, records []SessionRecord) {
	slices.SortStableFunc(records, func(a, b SessionRecord) int {
		if a.Header.CreatedAt != b.Header.CreatedAt {
			if a.Header.CreatedAt < b.Header.CreatedAt {
				return -1
			}
			return 1
		}
		return c.CompareString(a.Header.ID, b.Header.ID)
	})
}

func cloneRecord(r SessionRecord) SessionRecord {
	return SessionRecord{Header: r.Header.Clone(), Live: r.Live, Persisted: r.Persisted}
}
