package sessionquery

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// ServiceKey is the host service holding the session-query service.
var ServiceKey = host.NewKey[*Service]("sessionQuery")

// PersistedSnapshot is a persisted session's header and an opaque revision,
// qualified by its source, that changes whenever the log changes.
type PersistedSnapshot struct {
	Header   session.Header
	Revision string
	// Path and Size locate the log in its backend (the store: its file
	// and length in bytes) for catalogs that re-check it cheaply; a
	// backend without files leaves them zero.
	Path string
	Size int64
}

// Persistence is the durable-log backend as the service sees it. It never
// repairs: Inspect is a non-mutating full read. Implementations must honour
// ctx but the service awaits every started call regardless.
type Persistence interface {
	// List returns the headers of every persisted session without reading
	// whole logs.
	List(ctx context.Context) ([]PersistedSnapshot, error)
	// Inspect reads one whole log. A corrupt log returns an error for which
	// IsCorrupt reports true.
	Inspect(ctx context.Context, id string) (session.Header, []session.Event, error)
	// IsCorrupt reports whether err means the stored log is corrupt.
	IsCorrupt(err error) bool
}

// SearchEngine is the full-text provider behind SearchSessions and
// SearchEvents.
type SearchEngine interface {
	SearchSessions(ctx context.Context, req SessionSearchRequest) (SessionSearchPage, error)
	SearchEvents(ctx context.Context, req EventSearchRequest) (EventSearchPage, error)
	Close() error
}
