package compositions

import (
	"context"
	"errors"
	"log/slog"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// queryTree is the session-query tree every composition that reads past
// sessions mounts, the one way it is put together: the service over live
// sessions and the store (through the service's store adapter, whose
// change journal the index follows) and, unless session_query.open_at is
// "never", the index as the service's search engine and catalog.
type queryTree struct {
	svc     *sessionquery.Service
	ix      *searchindex.Index // nil when search is disabled
	unmount func() error
}

// mountQuery builds the tree over live and st. openAt, when not empty,
// replaces session_query.open_at unless that is "never".
func mountQuery(ctx context.Context, cfg *config.Config, live *session.Registry, st *store.Store, openAt string, opts searchindex.Options) (*queryTree, error) {
	sq, err := config.Get[searchindex.Settings](cfg, searchindex.ConfigSchema)
	if err != nil {
		return nil, err
	}
	svc, err := sessionquery.New(sq.ServiceConfig(), live)
	if err != nil {
		return nil, err
	}
	unbind := svc.Mount(sessionquery.NewStorePersistence(st))
	icfg := searchindex.ConfigFrom(sq)
	if openAt != "" && icfg.OpenAt != searchindex.OpenAtNever {
		icfg.OpenAt = openAt
	}
	ix, unmountIndex, err := searchindex.Mount(ctx, svc, icfg, opts)
	if err != nil {
		unbind()
		return nil, err
	}
	return &queryTree{svc: svc, ix: ix, unmount: func() error {
		err := unmountIndex()
		unbind()
		return err
	}}, nil
}

// mountQuery provides the session-query service over this process's live
// sessions and the JSONL store, with its search index.
func (r *Runtime) mountQuery(ctx context.Context) error {
	t, err := mountQuery(ctx, r.Config, r.Sessions, r.Store, "", searchindex.Options{Log: r.Log, Resident: true})
	if err != nil {
		return err
	}
	r.Host.OnClose("session-query", t.unmount)
	if _, err := host.Provide(r.Host, sessionquery.ServiceKey, "", t.svc); err != nil {
		return err
	}
	r.Query, r.Index = t.svc, t.ix
	if r.onQuery != nil {
		// Closing disposes in reverse order: the use ends before the
		// service closes.
		withdraw := r.onQuery(t.svc)
		r.Host.OnClose("session-query early use", func() error { withdraw(); return nil })
	}
	return nil
}

// Catalog is the session-query service over the persisted sessions alone,
// for consumers that drive no session (dsh sessions, dsh index).
type Catalog struct {
	Store *store.Store
	Query *sessionquery.Service
	// Index is nil when session_query.open_at is "never"; otherwise it
	// opens on first use.
	Index *searchindex.Index

	unmount func() error
}

// OpenCatalog builds a Catalog from cfg. notice (nil: discarded) receives
// one-line messages for the user, such as the one-time rebuild of an index
// built by another dsh version. Close it when done.
func OpenCatalog(cfg *config.Config, notice func(string)) (*Catalog, error) {
	dir, err := store.Dir(cfg)
	if err != nil {
		return nil, err
	}
	st := store.New(dir, store.Options{})
	// A catalog opens its index on first use whatever open_at says, so a
	// command opens it only if it reads it.
	t, err := mountQuery(context.Background(), cfg, session.NewRegistry(), st, searchindex.OpenAtFirstSearch,
		searchindex.Options{Log: slog.Default(), Notice: notice})
	if err != nil {
		return nil, err
	}
	return &Catalog{Store: st, Query: t.svc, Index: t.ix, unmount: t.unmount}, nil
}

// Close closes the index and the service.
func (c *Catalog) Close() error { return errors.Join(c.unmount(), c.Query.Close()) }
