package sessionquery

import (
	"context"
	"errors"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// StorePersistence adapts the on-disk session store to the Persistence seam.
// Listing reads header lines only; Inspect reads a whole log without taking
// its lock or repairing it, so a query never triggers crash repair.
func StorePersistence(s *store.Store) Persistence { return storePersistence{s} }

type storePersistence struct{ s *store.Store }

func (p storePersistence) List(ctx context.Context) ([]PersistedSnapshot, error) {
	entries, err := p.s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]PersistedSnapshot, len(entries))
	for i, e := range entries {
		// The store's revision is already qualified by its root.
		out[i] = PersistedSnapshot{Header: e.Header, Revision: e.Revision, Path: e.Path, Size: e.Size}
	}
	return out, nil
}

func (p storePersistence) Inspect(ctx context.Context, id string) (session.Header, []session.Event, error) {
	return p.s.Inspect(ctx, id)
}

func (p storePersistence) IsCorrupt(err error) bool {
	var ce *store.CorruptError
	return errors.As(err, &ce)
}
