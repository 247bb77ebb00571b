package compositions

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// mountIndex attaches the SQLite FTS5 engine to svc per
// session_query.open_at (startup opens and validates it now; first-search
// on the first search; never leaves search disabled).
func (r *Runtime) mountIndex(ctx context.Context, svc *sessionquery.Service) error {
	dispose, err := searchindex.Mount(ctx, r.Host, svc, searchindex.ConfigFrom(r.Config.SessionQuery), searchindex.Options{Log: r.Log})
	if err != nil {
		return err
	}
	r.Host.OnClose(searchindex.PluginName, dispose)
	return nil
}
