package searchindex

import (
	"context"
	"errors"
	"os"
	"strings"

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

// StorePersistence presents a JSONL store as the session-query service's
// persistence backend, with the store's change journal as its ChangeFeed.
// Mount it on the service (Service.Mount) for search to follow the journal.
type StorePersistence struct {
	// Persistence is the service's own store adapter (List, Inspect,
	// IsCorrupt); this type adds the feed.
	sessionquery.Persistence
	st *store.Store
}

var (
	_ sessionquery.Persistence = (*StorePersistence)(nil)
	_ ChangeFeed               = (*StorePersistence)(nil)
)

// NewStorePersistence wraps st.
func NewStorePersistence(st *store.Store) *StorePersistence {
	return &StorePersistence{Persistence: sessionquery.StorePersistence(st), st: st}
}

// Store returns the wrapped store.
func (p *StorePersistence) Store() *store.Store { return p.st }

// FeedSource is the sessions root.
func (p *StorePersistence) FeedSource() string { return p.st.Root() }

// FeedHead is the journal's current end.
func (p *StorePersistence) FeedHead() (int64, error) { return p.st.ChangesHead() }

// FeedChanges follows the change journal.
func (p *StorePersistence) FeedChanges(from int64) ([]string, int64, bool, error) {
	changes, next, err := p.st.Changes(from)
	var reset *store.JournalResetError
	if errors.As(err, &reset) {
		return nil, reset.Next, true, nil
	}
	if err != nil {
		return nil, from, false, err
	}
	ids := make([]string, len(changes))
	for i, c := range changes {
		ids[i] = c.ID
	}
	return ids, next, false, nil
}

// Snapshot stats one log.
func (p *StorePersistence) Snapshot(ctx context.Context, id string) (sessionquery.PersistedSnapshot, bool, error) {
	e, err := p.st.Stat(ctx, id)
	var ce *store.CorruptError
	if errors.Is(err, store.ErrNotFound) || errors.As(err, &ce) {
		// List skips a log whose header is unreadable; so does the feed.
		return sessionquery.PersistedSnapshot{}, false, nil
	}
	if err != nil {
		return sessionquery.PersistedSnapshot{}, false, err
	}
	return sessionquery.PersistedSnapshot{Header: e.Header, Revision: e.Revision, Path: e.Path, Size: e.Size}, true, nil
}

// Missing reports a log deleted between a Snapshot and an Inspect.
func (p *StorePersistence) Missing(err error) bool { return errors.Is(err, store.ErrNotFound) }

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

var _ DriftProbe = (*StorePersistence)(nil)

// BootID reads the kernel's boot id.
func (p *StorePersistence) BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// WorkspaceStamps stats the root and its workspace directories.
func (p *StorePersistence) WorkspaceStamps() ([]store.DirStamp, error) { return p.st.WorkspaceStamps() }

// WorkspaceSessions lists one workspace directory.
func (p *StorePersistence) WorkspaceSessions(dir string) ([]string, error) {
	return p.st.WorkspaceSessions(dir)
}

// WorkspaceOf names a log's workspace directory.
func (p *StorePersistence) WorkspaceOf(path string) string { return p.st.WorkspaceOf(path) }

// RevisionAt stats one log.
func (p *StorePersistence) RevisionAt(path string) (string, int64, error) {
	return p.st.RevisionAt(path)
}

// WriterRunning reads the log's lock owner.
func (p *StorePersistence) WriterRunning(path string) bool { return p.st.WriterRunning(path) }
