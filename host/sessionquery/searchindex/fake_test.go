package searchindex

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/session/sessiontest"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// fakePersistence is the shared scriptable backend as a
// sessionquery.Persistence without a change feed, so the index runs the
// generic observation protocol against it.
type fakePersistence struct{ *sessiontest.Backend }

func newFakePersistence() *fakePersistence { return &fakePersistence{sessiontest.New()} }

// put stores a session under a revision.
func (f *fakePersistence) put(h session.Header, rev string, events []session.Event) *fakePersistence {
	f.Put(h, rev, events)
	return f
}

func (f *fakePersistence) List(ctx context.Context) ([]sessionquery.PersistedSnapshot, error) {
	return sessiontest.ListAs(ctx, f.Backend, func(h session.Header, rev string) sessionquery.PersistedSnapshot {
		return sessionquery.PersistedSnapshot{Header: h, Revision: rev}
	})
}
