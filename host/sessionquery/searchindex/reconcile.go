package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// maxFeedRaces bounds how often one search restarts because another process
// moved the journal cursor first; each restart has less left to do.
const maxFeedRaces = 8

// progressFunc reports sessions examined out of a total (Rebuild's bar).
type progressFunc func(done, total int)

// liveRef is one live session as seen at the start of an attempt.
type liveRef struct {
	id   string
	live *session.Live
}

// persistedView answers, for the live observation, whether a live id also
// exists in the mounted persistence and under which header.
type persistedView interface {
	lookup(ctx context.Context, id string) (session.Header, bool, error)
	// changed reports whether id's persisted presence or header may differ
	// from what the overlay recorded, so its row must be re-examined.
	changed(id string) bool
}

// reconcile brings the index up to date with the live sessions and the
// mounted persistence (session-query.md §3.7) and returns the binding the
// index now reflects.
func (ix *Index) reconcile(ctx context.Context, progress progressFunc) (sessionquery.Binding, error) {
	look, _ := ctx.Value(oneLookKey{}).(*oneLook)
	if look != nil {
		look.mu.Lock()
		defer look.mu.Unlock()
		if look.ix == ix && look.db == ix.db {
			return look.binding, nil
		}
	}
	b, err := ix.reconcileNow(ctx, progress)
	if err == nil && look != nil {
		look.ix, look.db, look.binding = ix, ix.db, b
	}
	return b, err
}

// OneLook returns a context under which an index is brought up to date by
// the first operation only: the later ones read it as that one left it. A
// command that searches and then reads the titles of what it found sees
// one state of the history, and pays for one reconciliation (the drift
// checks, the journal) instead of one per call. A file reopened in between
// (deleted or replaced underneath) is brought up to date again. Not for a
// process that lives on: under it, nothing written after the first
// operation is seen.
func OneLook(ctx context.Context) context.Context {
	return context.WithValue(ctx, oneLookKey{}, &oneLook{})
}

type oneLookKey struct{}

// oneLook is the reconciliation a OneLook context already did.
type oneLook struct {
	mu      sync.Mutex
	ix      *Index    // nil until an index reconciled under it
	db      *database // the connection it reconciled
	binding sessionquery.Binding
}

func (ix *Index) reconcileNow(ctx context.Context, progress progressFunc) (sessionquery.Binding, error) {
	races := 0
	for attempt := 0; attempt < 2; {
		b, retry, err := ix.attempt(ctx, progress)
		switch {
		case errors.Is(err, errFillBeside):
			if err := ix.fillBeside(ctx, progress); err != nil {
				return b, err
			}
			continue
		case errors.Is(err, errFeedMoved):
			races++
			if races > maxFeedRaces {
				return b, indexFailed(err, "session-search reconciliation failed: %s; other dsh processes keep updating the index, retry", err.Error())
			}
			continue
		case err != nil:
			return b, err
		case !retry:
			return b, nil
		}
		attempt++
	}
	return sessionquery.Binding{}, sessionquery.Errorf(sessionquery.CodePersistenceFailed, msgNotStable)
}

func (ix *Index) attempt(ctx context.Context, progress progressFunc) (sessionquery.Binding, bool, error) {
	b := ix.svc.Binding()
	l0 := ix.liveRefs()
	ix.listedNow = false
	canReuse := !ix.seenBinding || b.ID == ix.bindingID
	pointerChanged := ix.seenBinding && b.ID != ix.bindingID
	if err := checkCtx(ctx); err != nil {
		return b, false, err
	}
	bt := &batch{}
	var view persistedView = noPersistence{flip: pointerChanged}
	if p := b.Persistence; p != nil {
		var retry bool
		var err error
		if feed, ok := p.(ChangeFeed); ok {
			view, retry, err = ix.observeFeed(ctx, b, feed, l0, bt, progress)
		} else {
			view, retry, err = ix.observeGeneric(ctx, b, canReuse, l0, bt)
		}
		if err != nil || retry {
			return b, retry, err
		}
	}
	retry, err := ix.observeLive(ctx, l0, view, bt)
	if err != nil || retry {
		return b, retry, err
	}
	if err := checkCtx(ctx); err != nil {
		return b, false, err
	}
	res, err := ix.commit(ctx, bt)
	if err != nil {
		if errors.Is(err, errFeedMoved) {
			return b, false, err
		}
		return b, false, ix.reconcileFailed(ctx, err)
	}
	if res.wroteLive || res.wrotePersisted || pointerChanged {
		ix.memGen++
	}
	if pointerChanged {
		ix.epoch++
	}
	for _, id := range bt.liveDel {
		delete(ix.live, id)
	}
	for id, row := range res.liveRows {
		ix.live[id] = row
	}
	ix.nextLocal, ix.nextLiveKey = res.nextLocal, res.nextLiveKey
	ix.seenBinding, ix.bindingID = true, b.ID
	ix.listed = ix.listed || ix.listedNow
	return b, false, nil
}

func (ix *Index) reconcileFailed(ctx context.Context, err error) error {
	// A read interrupted by cancellation is an abort, not a broken index.
	if ctx.Err() != nil {
		return aborted(ctx)
	}
	ix.discard(err)
	return indexFailed(err, "session-search reconciliation failed: %s", detail(err))
}

func (ix *Index) liveRefs() []liveRef {
	list := ix.svc.Live().List()
	out := make([]liveRef, len(list))
	for i, l := range list {
		out[i] = liveRef{id: l.ID(), live: l}
	}
	return out
}

func (ix *Index) isLive(l0 []liveRef, id string) bool {
	for _, r := range l0 {
		if r.id == id {
			return true
		}
	}
	_, now := ix.svc.Live().Get(id)
	return now
}

func sameLive(a, b []liveRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// observeLive overlays every live session whose log or persisted presence
// changed since it was last overlaid, and drops detached ones. A live
// session is fingerprinted by Live.Revision, which changes on every append
// and differs between two instances of one id.
func (ix *Index) observeLive(ctx context.Context, l0 []liveRef, view persistedView, bt *batch) (bool, error) {
	now := ix.liveRefs()
	seen := make(map[string]bool, len(now))
	for _, r := range now {
		id := r.id
		seen[id] = true
		rev := r.live.Revision()
		row, had := ix.live[id]
		if had && row.fingerprint == rev && !view.changed(id) {
			continue
		}
		h := r.live.Header()
		ph, persisted, err := view.lookup(ctx, id)
		if err != nil {
			return false, err
		}
		if persisted && !session.Compatible(h, ph) {
			return false, sessionquery.Errorf(sessionquery.CodeSourceConflict, `session source headers conflict for session "%s"`, id)
		}
		if had && row.fingerprint == rev && row.persisted == persisted {
			continue
		}
		h, events := r.live.Snapshot()
		docs, err := sessionquery.BuildDocuments(id, events)
		if err != nil {
			return false, err
		}
		bt.live = append(bt.live, liveChange{header: h, fingerprint: rev, persisted: persisted, events: len(events), docs: prepareDocs(docs),
			cat: catalogOf(h, events, 0)})
	}
	for id := range ix.live {
		if !seen[id] {
			bt.liveDel = append(bt.liveDel, id)
		}
	}
	return !sameLive(l0, ix.liveRefs()), nil
}

// noPersistence is the view while nothing is mounted: no live session is
// persisted, and rows recorded as persisted flip when a backend unmounts.
type noPersistence struct{ flip bool }

func (noPersistence) lookup(context.Context, string) (session.Header, bool, error) {
	return session.Header{}, false, nil
}
func (n noPersistence) changed(string) bool { return n.flip }

// backendFailure maps a failed persistence call: an abort is ABORTED, a
// rejection from a backend that was swapped meanwhile is discarded (retry),
// a typed session-query error passes unchanged, anything else is
// PERSISTENCE_FAILED.
func (ix *Index) backendFailure(ctx context.Context, b sessionquery.Binding, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, aborted(ctx)
	}
	if ix.svc.Binding().ID != b.ID {
		return true, nil
	}
	if isQueryError(err) {
		return false, err
	}
	return false, sessionquery.Wrap(sessionquery.CodePersistenceFailed, err, "session-search persistence observation failed: %s", detail(err))
}

// inspect reads one log for indexing and builds its documents. The listed
// header must be compatible with the inspected one.
func (ix *Index) inspect(ctx context.Context, b sessionquery.Binding, listed sessionquery.PersistedSnapshot, base string) (persistedChange, bool, error) {
	if err := checkCtx(ctx); err != nil {
		return persistedChange{}, false, err
	}
	id := listed.Header.ID
	var (
		h      session.Header
		events []session.Event
		extent []byte
		err    error
	)
	if ar, ok := b.Persistence.(AppendReader); ok {
		var x store.Extent
		h, events, x, err = ar.InspectExtent(ctx, id)
		extent = x.Encode()
	} else {
		h, events, err = b.Persistence.Inspect(ctx, id)
	}
	if err != nil && ctx.Err() == nil && b.Persistence.IsCorrupt(err) {
		return ix.unreadable(b, listed, base, err), false, nil
	}
	if err != nil {
		retry, err := ix.backendFailure(ctx, b, err)
		return persistedChange{}, retry, err
	}
	if err := checkCtx(ctx); err != nil {
		return persistedChange{}, false, err
	}
	if !session.Compatible(listed.Header, h) {
		return persistedChange{}, false, sessionquery.Errorf(sessionquery.CodeSourceConflict, `session source headers conflict for session "%s"`, id)
	}
	// A valid log is folded once, for its validation and its documents.
	cat, fold := catalogFold(h, events, listed.Size)
	var docs []sessionquery.Document
	if fold != nil {
		docs = sessionquery.FoldedDocuments(id, events, fold)
	} else if docs, err = sessionquery.BuildDocuments(id, events); err != nil {
		return ix.unreadable(b, listed, base, err), false, nil
	}
	rows := prepareDocs(docs)
	terms := summarize(rows, ix.tracked.Load(), ix.bulk.counter())
	return persistedChange{header: h.Clone(), revision: listed.Revision, base: base, events: len(events), docs: rows,
		terms: terms, cat: cat, path: listed.Path, dir: ix.workspaceOf(b, listed.Path), extent: extent}, false, nil
}

// unreadable catalogues a log that cannot be read (corrupt, not a regular
// file, an event over the store's limit, an invalid surface) as an
// unreadable session without documents at its listed revision: search
// skips it and does not
// inspect it again, or warn again, until the log changes, and one broken
// log never fails the searches of every other session (session-query.md
// §8 gotcha 23 is upstream's behaviour, not ours). Exact reads of its id
// still report the error.
func (ix *Index) unreadable(b sessionquery.Binding, listed sessionquery.PersistedSnapshot, base string, err error) persistedChange {
	ix.log.Warn("session-search: skipping an unreadable session log", "session", listed.Header.ID, "err", err)
	cat := catalogOf(listed.Header, nil, listed.Size)
	cat.unreadable = err.Error()
	return persistedChange{header: listed.Header.Clone(), revision: listed.Revision, base: base,
		cat: cat, path: listed.Path, dir: ix.workspaceOf(b, listed.Path)}
}

// indexedRevisions reads every persisted row's revision.
func (ix *Index) indexedRevisions(ctx context.Context) (map[string]string, error) {
	rows, err := ix.db.conn.QueryContext(ctx, `SELECT session_id, revision FROM persisted_sessions`)
	if err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, rev string
		if err := rows.Scan(&id, &rev); err != nil {
			return nil, ix.reconcileFailed(ctx, err)
		}
		out[id] = rev
	}
	if err := rows.Err(); err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	return out, nil
}

func (ix *Index) indexedRevision(ctx context.Context, id string) (string, bool, error) {
	var rev string
	err := ix.db.conn.QueryRowContext(ctx, `SELECT revision FROM persisted_sessions WHERE session_id = ?`, id).Scan(&rev)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, ix.reconcileFailed(ctx, err)
	}
	return rev, true, nil
}

// indexedRow is what the append-only catch-up needs of a persisted row.
type indexedRow struct {
	key         int64
	revision    string
	header      string
	events      int
	docs        int
	docTimeMax  *int64
	lastEventAt int64
	extent      []byte
	unreadable  string
	invalid     string
}

func (ix *Index) indexedRow(ctx context.Context, id string) (indexedRow, bool, error) {
	var r indexedRow
	var docTimeMax sql.NullInt64
	err := ix.db.conn.QueryRowContext(ctx, `SELECT session_key, revision, header, event_count, doc_count, doc_time_max,
		last_event_at, log_extent, unreadable, invalid FROM persisted_sessions WHERE session_id = ?`, id).Scan(
		&r.key, &r.revision, &r.header, &r.events, &r.docs, &docTimeMax, &r.lastEventAt, &r.extent, &r.unreadable, &r.invalid)
	if errors.Is(err, sql.ErrNoRows) {
		return indexedRow{}, false, nil
	}
	if err != nil {
		return indexedRow{}, false, ix.reconcileFailed(ctx, err)
	}
	if docTimeMax.Valid {
		r.docTimeMax = &docTimeMax.Int64
	}
	return r, true, nil
}

// checkSnapshots rejects a malformed listing.
func checkSnapshots(snaps []sessionquery.PersistedSnapshot) error {
	seen := make(map[string]bool, len(snaps))
	for _, s := range snaps {
		if seen[s.Header.ID] {
			return fmt.Errorf("persistence listed session %q twice", s.Header.ID)
		}
		seen[s.Header.ID] = true
	}
	return nil
}

// workspaceOf is the workspace directory of a log path, for a backend
// that groups logs in directories ("" otherwise).
func (ix *Index) workspaceOf(b sessionquery.Binding, path string) string {
	if d, ok := b.Persistence.(DriftProbe); ok && path != "" {
		return d.WorkspaceOf(path)
	}
	return ""
}
