package compositions

import (
	"context"
	"log/slog"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// newQueryService returns the session-query service over live and the
// store. The index follows the store's change journal through the mounted
// adapter instead of listing every log on every search.
func newQueryService(cfg *config.Config, live *session.Registry, st *store.Store) (*sessionquery.Service, func(), error) {
	sq := cfg.SessionQuery
	svc, err := sessionquery.New(sessionquery.Config{
		ReadWindowMax:               sq.ReadWindowMax,
		PersistedInspectConcurrency: sq.PersistedInspectConcurrency,
	}, live)
	if err != nil {
		return nil, nil, err
	}
	return svc, svc.Mount(searchindex.NewStorePersistence(st)), nil
}

// mountQuery provides the session-query service over this process's live
// sessions and the JSONL store, with its search index.
func (r *Runtime) mountQuery(ctx context.Context) error {
	svc, unmount, err := newQueryService(r.Config, r.Sessions, r.Store)
	if err != nil {
		return err
	}
	r.Host.OnClose("session-query persistence", func() error { unmount(); return nil })
	if _, err := host.Provide(r.Host, sessionquery.ServiceKey, "", svc); err != nil {
		return err
	}
	r.Query = svc
	return r.mountIndex(ctx, svc)
}

// Catalog is the session-query service over the persisted sessions alone,
// for consumers that drive no session (dsh sessions, dsh index).
type Catalog struct {
	Store *store.Store
	Query *sessionquery.Service
	// Index is nil when session_query.open_at is "never"; otherwise it
	// opens on first use.
	Index *searchindex.Index
}

// OpenCatalog builds a Catalog from cfg. notice (nil: discarded) receives
// one-line messages for the user, such as the one-time rebuild of an index
// built by another dsh version. Close it when done.
func OpenCatalog(cfg *config.Config, notice func(string)) (*Catalog, error) {
	st := store.New(cfg.Sessions.Dir, store.Options{})
	svc, _, err := newQueryService(cfg, session.NewRegistry(), st)
	if err != nil {
		return nil, err
	}
	c := &Catalog{Store: st, Query: svc}
	icfg := searchindex.ConfigFrom(cfg.SessionQuery)
	if icfg.OpenAt != searchindex.OpenAtNever {
		icfg.OpenAt = searchindex.OpenAtFirstSearch
		if c.Index, err = searchindex.New(icfg, svc, searchindex.Options{Log: slog.Default(), Notice: notice}); err != nil {
			return nil, err
		}
		svc.SetEngine(c.Index)
	}
	return c, nil
}

// Close closes the service and with it the index.
func (c *Catalog) Close() error { return c.Query.Close() }
