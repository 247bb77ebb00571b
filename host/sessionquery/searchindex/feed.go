package searchindex

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// ChangeFeed is an optional capability of a sessionquery.Persistence: it
// tells which logs changed since a cursor without listing every log, which
// is what keeps a search's no-change reconciliation cheap on a large
// corpus. Without it, every search lists the whole backend (the protocol of
// session-query.md §3.7).
type ChangeFeed interface {
	// FeedSource identifies the feed (for the store, its sessions root). A
	// cursor means nothing for another source.
	FeedSource() string
	// FeedHead returns the cursor at the feed's current end. A reader takes
	// it, lists everything, then follows FeedChanges from it.
	FeedHead() (int64, error)
	// FeedChanges returns the ids of logs that changed after from (possibly
	// repeated) and the cursor to continue from. reset reports a feed that
	// no longer continues from (deleted, truncated, replaced): list
	// everything again and follow from next.
	FeedChanges(from int64) (ids []string, next int64, reset bool, err error)
	// Snapshot returns one session's header and revision without reading
	// its events; found is false when it no longer exists.
	Snapshot(ctx context.Context, id string) (snap sessionquery.PersistedSnapshot, found bool, err error)
	// Missing reports whether an Inspect error means the log is gone.
	Missing(err error) bool
}

// DriftProbe is an optional capability of a ChangeFeed that lets the index
// notice, at a cost proportional to the workspaces and the open writers
// rather than to the logs, what the journal cannot tell (see the package
// doc, "Trust and drift").
type DriftProbe interface {
	// BootID identifies the machine's current boot ("" when unknown): the
	// journal is not fsynced, so after a reboot it may have lost records.
	BootID() string
	// WorkspaceStamps returns the modification time of the root ("") and
	// of every workspace directory.
	WorkspaceStamps() ([]store.DirStamp, error)
	// WorkspaceSessions lists the session ids under one workspace directory.
	WorkspaceSessions(dir string) ([]string, error)
	// WorkspaceOf is the workspace directory of a log path.
	WorkspaceOf(path string) string
	// RevisionAt stats a log by path (fs.ErrNotExist when it is gone).
	RevisionAt(path string) (revision string, size int64, err error)
	// WriterRunning reports whether the writer of the log at path may
	// still be running (so its next flush will be journaled).
	WriterRunning(path string) bool
}

// AppendReader is an optional capability of a ChangeFeed that lets the
// index read only what was appended to a log it holds (see the package
// doc, "Reconciliation").
type AppendReader interface {
	// InspectExtent is Inspect also returning the extent of what it read.
	InspectExtent(ctx context.Context, id string) (session.Header, []session.Event, store.Extent, error)
	// ReadAppended reads the events appended to a log since the read that
	// returned from, and the log's extent now.
	ReadAppended(ctx context.Context, id string, from store.Extent) ([]session.Event, store.Extent, error)
	// NotAppended reports a ReadAppended error that asks for a whole read.
	NotAppended(err error) bool
}

// The service's store adapter offers every capability.
var (
	_ ChangeFeed   = (*sessionquery.StorePersistence)(nil)
	_ DriftProbe   = (*sessionquery.StorePersistence)(nil)
	_ AppendReader = (*sessionquery.StorePersistence)(nil)
)
