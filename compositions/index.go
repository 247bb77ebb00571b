package compositions

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// mountIndex attaches the full-text search engine to svc per
// session_query.open_at.
func (r *Runtime) mountIndex(ctx context.Context, svc *sessionquery.Service) error {
	return nil
}
