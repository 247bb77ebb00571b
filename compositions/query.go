package compositions

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// mountQuery provides the session-query service over this process's live
// sessions and the JSONL store.
func (r *Runtime) mountQuery(ctx context.Context) error {
	sq := r.Config.SessionQuery
	svc, err := sessionquery.New(sessionquery.Config{
		ReadWindowMax:               sq.ReadWindowMax,
		PersistedInspectConcurrency: sq.PersistedInspectConcurrency,
	}, r.Sessions)
	if err != nil {
		return err
	}
	// The search index follows the store's change journal through this
	// adapter instead of listing every log on every search.
	unmount := svc.Mount(searchindex.NewStorePersistence(r.Store))
	r.Host.OnClose("session-query persistence", func() error { unmount(); return nil })
	if _, err := host.Provide(r.Host, sessionquery.ServiceKey, "", svc); err != nil {
		return err
	}
	r.Query = svc
	return r.mountIndex(ctx, svc)
}
