package sessionquery

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// StorePersistence is the one adapter from the on-disk JSONL store to the
// service's Persistence seam. Listing reads header lines only; Inspect reads
// a whole log without taking its lock or repairing it, so a query never
// triggers crash repair. It also offers the store's change journal and
// directory stamps, the optional capabilities (searchindex.ChangeFeed and
// searchindex.DriftProbe) that let the search index follow the store
// without listing every log.
type StorePersistence struct{ st *store.Store }

var _ Persistence = (*StorePersistence)(nil)

// NewStorePersistence adapts st.
func NewStorePersistence(st *store.Store) *StorePersistence { return &StorePersistence{st: st} }

// Store returns the adapted store.
func (p *StorePersistence) Store() *store.Store { return p.st }

// List reads every log's header.
func (p *StorePersistence) List(ctx context.Context) ([]PersistedSnapshot, error) {
	entries, err := p.st.List(ctx)
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

// Inspect reads one whole log without locking or repairing it; a log whose
// writer crashed mid-turn reads with the closers its repair will write
// (store.InspectRecovered), so its partial answer is shown and searched.
func (p *StorePersistence) Inspect(ctx context.Context, id string) (session.Header, []session.Event, error) {
	return p.st.InspectRecovered(ctx, id)
}

// InspectExtent is Inspect also returning the extent of what it read,
// for ReadAppended.
func (p *StorePersistence) InspectExtent(ctx context.Context, id string) (session.Header, []session.Event, store.Extent, error) {
	return p.st.InspectExtent(ctx, id)
}

// ReadAppended reads only the events appended to a log since the read
// that returned from (store.ReadAppended).
func (p *StorePersistence) ReadAppended(ctx context.Context, id string, from store.Extent) ([]session.Event, store.Extent, error) {
	return p.st.ReadAppended(ctx, id, from)
}

// NotAppended reports a ReadAppended that must be a whole read instead.
func (p *StorePersistence) NotAppended(err error) bool { return errors.Is(err, store.ErrNotAppended) }

// IsCorrupt reports a log the store cannot parse.
func (p *StorePersistence) IsCorrupt(err error) bool {
	var ce *store.CorruptError
	return errors.As(err, &ce)
}

// FeedSource is the sessions root: a journal cursor means nothing for
// another root.
func (p *StorePersistence) FeedSource() string { return p.st.Root() }

// FeedHead is the journal's current end.
func (p *StorePersistence) FeedHead() (int64, error) { return p.st.ChangesHead() }

// FeedChanges returns the ids the journal records after from and the cursor
// to continue from; reset reports a journal that no longer continues from
// there (deleted, truncated, replaced).
func (p *StorePersistence) FeedChanges(from int64) (ids []string, next int64, reset bool, err error) {
	changes, next, err := p.st.Changes(from)
	var re *store.JournalResetError
	if errors.As(err, &re) {
		return nil, re.Next, true, nil
	}
	if err != nil {
		return nil, from, false, err
	}
	ids = make([]string, len(changes))
	for i, c := range changes {
		ids[i] = c.ID
	}
	return ids, next, false, nil
}

// Snapshot stats one log without reading its events; found is false when
// it is gone or its header is unreadable (List skips such a log too).
func (p *StorePersistence) Snapshot(ctx context.Context, id string) (snap PersistedSnapshot, found bool, err error) {
	e, err := p.st.Stat(ctx, id)
	var ce *store.CorruptError
	if errors.Is(err, store.ErrNotFound) || errors.As(err, &ce) {
		return PersistedSnapshot{}, false, nil
	}
	if err != nil {
		return PersistedSnapshot{}, false, err
	}
	return PersistedSnapshot{Header: e.Header, Revision: e.Revision, Path: e.Path, Size: e.Size}, true, nil
}

// Missing reports a log deleted between a Snapshot and an Inspect.
func (p *StorePersistence) Missing(err error) bool { return errors.Is(err, store.ErrNotFound) }

// BootID reads the kernel's boot id ("" when unknown).
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

// RevisionAt stats one log by path.
func (p *StorePersistence) RevisionAt(path string) (string, int64, error) {
	return p.st.RevisionAt(path)
}

// WriterRunning reads the log's lock owner.
func (p *StorePersistence) WriterRunning(path string) bool { return p.st.WriterRunning(path) }
