package searchindex

import (
	"context"
	"database/sql"
	"slices"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// feedState is the shared journal position stored in the index.
type feedState struct {
	source *string
	cursor *int64
	boot   *string
}

// observeFeed reconciles a backend with a change feed. Normally it only
// looks at the ids the journal reported since the stored cursor, the ids
// parked as pending, and the live sessions that detached here; the first
// time, after a journal reset or for another sessions root, it lists
// everything once. Inspected logs are committed in bounded batches as it
// goes; the final batch (built by the caller) advances the cursor, and only
// if no other process moved it meanwhile.
func (ix *Index) observeFeed(ctx context.Context, b sessionquery.Binding, feed ChangeFeed, l0 []liveRef, bt *batch, progress progressFunc) (persistedView, bool, error) {
	st, err := ix.readFeedState(ctx)
	if err != nil {
		return nil, false, err
	}
	source := feed.FeedSource()
	probe, _ := feed.(DriftProbe)
	boot := ""
	if probe != nil {
		boot = probe.BootID()
	}
	// The index trusts itself up to the stored cursor when the journal is
	// the same one and the machine has not rebooted since (the journal is
	// not fsynced, so a reboot may have lost records); what the journal
	// cannot tell, findDrift looks for. Without a boot id or a drift
	// probe, each process lists everything once, as it first reconciles.
	full := !ix.trusts(st, feed, probe)
	var ids []string
	var next int64
	haveHead := false
	if !full {
		var reset bool
		ids, next, reset, err = feed.FeedChanges(*st.cursor)
		if err != nil {
			retry, err := ix.backendFailure(ctx, b, err)
			return nil, retry, err
		}
		if reset {
			full, haveHead = true, true
		}
	}
	if full && !haveHead {
		if next, err = feed.FeedHead(); err != nil {
			retry, err := ix.backendFailure(ctx, b, err)
			return nil, retry, err
		}
	}
	if err := checkCtx(ctx); err != nil {
		return nil, false, err
	}
	w := &feedWork{ix: ix, b: b, bt: bt, progress: progress}
	var view persistedView
	var retry bool
	if full {
		view, retry, err = w.full(ctx, l0, probe)
	} else {
		view, retry, err = w.incremental(ctx, feed, l0, ids, probe)
	}
	if err != nil || retry {
		return nil, retry, err
	}
	// Unparking a pending id is only right if nobody consumed a newer
	// journal record meanwhile (its owner re-parks the id when it does),
	// so such a batch commits only if the cursor has not moved.
	if full || next != *st.cursor || len(bt.pendingDel) > 0 || len(bt.writersDel) > 0 || bt.stampsSet ||
		st.boot == nil || *st.boot != boot {
		bt.feed = &feedAdvance{source: source, fromSource: st.source, from: st.cursor, to: next, boot: boot}
	}
	ix.listedNow = full
	return view, false, nil
}

// trusts reports whether the index may follow the journal from the stored
// cursor instead of listing everything (see observeFeed).
func (ix *Index) trusts(st feedState, feed ChangeFeed, probe DriftProbe) bool {
	if ix.forceFull || st.source == nil || *st.source != feed.FeedSource() || st.cursor == nil {
		return false
	}
	if ix.listed {
		return true
	}
	if probe == nil {
		return false
	}
	boot := probe.BootID()
	return boot != "" && st.boot != nil && *st.boot == boot
}

func (ix *Index) readFeedState(ctx context.Context) (feedState, error) {
	var st feedState
	var src, boot sql.NullString
	var cur sql.NullInt64
	if err := ix.db.conn.QueryRowContext(ctx, `SELECT global_generation, feed_source, feed_cursor, feed_boot FROM search_state WHERE singleton = 1`).Scan(&ix.dbGen, &src, &cur, &boot); err != nil {
		return st, ix.reconcileFailed(ctx, err)
	}
	if boot.Valid {
		st.boot = &boot.String
	}
	if src.Valid {
		st.source = &src.String
	}
	if cur.Valid {
		st.cursor = &cur.Int64
	}
	return st, nil
}

func (ix *Index) readPending(ctx context.Context) ([]string, error) {
	return ix.queryIDs(ctx, `SELECT session_id FROM pending_sessions ORDER BY session_id`)
}

// feedWork is one feed observation in progress.
type feedWork struct {
	ix       *Index
	b        sessionquery.Binding
	bt       *batch // the final batch
	inter    batch  // inspected logs not yet committed
	progress progressFunc
}

// full lists every persisted session, inspects the ones whose revision the
// index does not hold and deletes the rows of vanished ones.
func (w *feedWork) full(ctx context.Context, l0 []liveRef, probe DriftProbe) (persistedView, bool, error) {
	ix := w.ix
	// The directory stamps are taken before the listing, so a change
	// after them shows as a changed stamp next time.
	if probe != nil {
		stamps, err := probe.WorkspaceStamps()
		if err != nil {
			return nil, false, sourceFailed(err)
		}
		w.bt.stamps, w.bt.stampsSet = trustedStamps(stamps), true
	}
	snaps, err := w.b.Persistence.List(ctx)
	if err == nil {
		err = checkSnapshots(snaps)
	}
	if err != nil {
		retry, err := ix.backendFailure(ctx, w.b, err)
		return nil, retry, err
	}
	if err := checkCtx(ctx); err != nil {
		return nil, false, err
	}
	indexed, err := ix.indexedRevisions(ctx)
	if err != nil {
		return nil, false, err
	}
	listed := make(listedView, len(snaps))
	var jobs []*inspection
	for i := range snaps {
		snap := &snaps[i]
		id := snap.Header.ID
		listed[id] = &snap.Header
		switch rev, ok := indexed[id]; {
		case ix.isLive(l0, id):
			w.bt.pendingAdd = append(w.bt.pendingAdd, id)
		case ok && rev == snap.Revision:
		default:
			jobs = append(jobs, &inspection{snap: snap, base: rev})
		}
	}
	if ix.fillsBeside(len(indexed), len(jobs)) {
		return nil, false, errFillBeside
	}
	if len(jobs) >= bulkSessions {
		defer ix.bulkLoad(ctx)()
	}
	pf := newPrefetcher(ctx, ix, w.b, jobs)
	defer pf.stop()
	for i := range jobs {
		job := pf.take(i)
		if job.err != nil || job.retry {
			return nil, job.retry, job.err
		}
		if err := w.add(ctx, *job.c); err != nil {
			return nil, false, err
		}
		w.report(i+1, len(jobs))
	}
	for id := range indexed {
		if _, ok := listed[id]; !ok {
			w.bt.deletes = append(w.bt.deletes, id)
		}
	}
	w.finish()
	return listed, false, nil
}

// incremental examines only the journal's ids, the pending ids and the
// sessions that stopped being live here.
func (w *feedWork) incremental(ctx context.Context, feed ChangeFeed, l0 []liveRef, journal []string, probe DriftProbe) (persistedView, bool, error) {
	ix := w.ix
	pending, err := ix.readPending(ctx)
	if err != nil {
		return nil, false, err
	}
	d, err := ix.findDrift(ctx, probe)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, aborted(ctx)
		}
		return nil, false, err
	}
	w.bt.writersDel = d.writersDel
	if d.stamps != nil {
		w.bt.stamps, w.bt.stampsSet = d.stamps, true
	}
	// The candidates in order, each once; a copied-in workspace or a long
	// journal makes thousands.
	var cands []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			cands = append(cands, id)
		}
	}
	inJournal, inPending := setOf(journal), setOf(pending)
	for _, id := range journal {
		add(id)
	}
	for _, id := range pending {
		add(id)
	}
	for id := range ix.live {
		if !ix.isLive(l0, id) {
			add(id)
		}
	}
	for _, id := range d.ids {
		add(id)
	}
	view := &feedView{feed: feed, b: w.b, ix: ix, snaps: map[string]*sessionquery.PersistedSnapshot{}, touched: map[string]bool{}}
	for i, id := range cands {
		view.touched[id] = true
		isPending := inPending[id]
		if ix.isLive(l0, id) {
			// A journal record re-parks the id even if it looked
			// pending: another process may be unparking it right now,
			// having read the log before this change.
			if !isPending || inJournal[id] {
				w.bt.pendingAdd = append(w.bt.pendingAdd, id)
			}
			continue
		}
		snap, found, retry, err := view.snapshot(ctx, id)
		if err != nil || retry {
			return nil, retry, err
		}
		if isPending {
			w.bt.pendingDel = append(w.bt.pendingDel, id)
		}
		if !found {
			w.bt.deletes = append(w.bt.deletes, id)
			continue
		}
		// A journal record may announce a writer (Create and Open record
		// one as soon as they hold the lock): watch its log until the
		// writer is gone, in case it dies before journaling its appends.
		if probe != nil && inJournal[id] && snap.Path != "" && probe.WriterRunning(snap.Path) {
			w.bt.writersAdd = append(w.bt.writersAdd, openWriter{id: id, path: snap.Path})
		}
		row, ok, err := ix.indexedRow(ctx, id)
		if err != nil {
			return nil, false, err
		}
		if ok && row.revision == snap.Revision {
			continue
		}
		// Only a log the journal names may have been appended to by a
		// dsh writer; anything else (drift, a pending id) is read whole.
		if ok && inJournal[id] {
			appended, err := w.appendOnly(ctx, *snap, row)
			if err != nil {
				return nil, false, err
			}
			if appended {
				w.report(i+1, len(cands))
				continue
			}
		}
		retry, err = w.index(ctx, *snap, row.revision)
		if err != nil && feed.Missing(err) {
			w.bt.deletes = append(w.bt.deletes, id)
			continue
		}
		if err != nil || retry {
			return nil, retry, err
		}
		w.report(i+1, len(cands))
	}
	w.finish()
	return view, false, nil
}

// bulkSessions is how many logs to index at once make a bulk load.
const bulkSessions = 200

// bulkAutomerge is FTS5's automerge while a shared file is bulk loaded.
const bulkAutomerge = 16

// bulkLoad lets FTS5 merge segments less eagerly while a whole corpus is
// indexed (segments accumulate bulkAutomerge to a level instead of 4
// before a merge, which roughly halves the merge work of a build) and
// returns the function that restores the default for incremental
// updates. The setting lives in the shared database; a process that dies
// in between leaves the laxer merge policy until the next bulk load ends.
// A rebuild's private file has its own policy for the whole build (see
// buildUnsynced).
func (ix *Index) bulkLoad(ctx context.Context) func() {
	if ix.private {
		return func() {}
	}
	set := func(n int) {
		_, err := ix.db.conn.ExecContext(context.WithoutCancel(ctx), `INSERT INTO persisted_fts(persisted_fts, rank) VALUES ('automerge', ?)`, n)
		if err != nil {
			ix.log.Warn("session-search: cannot change the FTS5 merge policy", "err", err)
		}
	}
	set(bulkAutomerge)
	return func() { set(ftsAutomerge) }
}

// index inspects one log and queues its documents.
func (w *feedWork) index(ctx context.Context, snap sessionquery.PersistedSnapshot, base string) (bool, error) {
	c, retry, err := w.ix.inspect(ctx, w.b, snap, base)
	if err != nil || retry {
		return retry, err
	}
	return false, w.add(ctx, c)
}

// add queues one inspected log, committing a batch whenever enough has
// accumulated.
func (w *feedWork) add(ctx context.Context, c persistedChange) error {
	w.inter.addUpsert(c)
	return w.commitIfFull(ctx)
}

// commitIfFull commits the inspected logs once enough has accumulated.
func (w *feedWork) commitIfFull(ctx context.Context) error {
	if !w.inter.full() {
		return nil
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	res, err := w.ix.commit(ctx, &w.inter)
	if err != nil {
		return w.ix.reconcileFailed(ctx, err)
	}
	if res.wrotePersisted {
		w.ix.memGen++
	}
	w.inter = batch{}
	return nil
}

// appendOnly indexes only the events appended to an indexed log since it
// was read (see docBits), when the read proves that the log only grew and
// the appended events change nothing indexed before them: no replace, a
// valid log. An appended document older than the session's latest is
// indexed with the documents it sorts before (renumberLater). false asks
// for a whole read, which also reports whatever went wrong.
func (w *feedWork) appendOnly(ctx context.Context, snap sessionquery.PersistedSnapshot, row indexedRow) (bool, error) {
	ar, ok := w.b.Persistence.(AppendReader)
	if !ok || row.unreadable != "" || row.invalid != "" || row.header != string(session.MustMarshal(snap.Header)) {
		return false, nil
	}
	from, ok := store.DecodeExtent(row.extent)
	if !ok || from.Events != row.events {
		return false, nil
	}
	id := snap.Header.ID
	events, x, err := ar.ReadAppended(ctx, id, from)
	if err != nil {
		if ctx.Err() != nil {
			return false, aborted(ctx)
		}
		return false, nil
	}
	surfaces, ok := session.AppendedSurfaces(from.Events, events)
	if !ok {
		return false, nil
	}
	docs, ok := appendedDocs(sessionquery.AppendedDocuments(id, events, surfaces), row.docs)
	if !ok {
		return false, nil
	}
	a := appendChange{id: id, key: row.key, revision: snap.Revision, base: row.revision,
		events: row.events + len(events), docCount: row.docs + len(docs), docs: docs,
		docTimeMax: row.docTimeMax, extent: x.Encode(), logBytes: snap.Size, lastEventAt: row.lastEventAt}
	// A writer's clock that went back (or events stamped ahead of it)
	// makes an appended document older than the session's latest: the
	// documents it sorts before take later ordinals (docs is in (time,
	// seq) order, so its first is the earliest).
	if len(docs) > 0 && a.docTimeMax != nil && docs[0].time < *a.docTimeMax {
		earliest := docs[0].time
		a.renumberAfter = &earliest
	}
	if t := maxDocTime(docs); t != nil && (a.docTimeMax == nil || *t > *a.docTimeMax) {
		a.docTimeMax = t
	}
	if n := len(events); n > 0 {
		a.lastEventAt = events[n-1].Time
	}
	if slices.ContainsFunc(events, func(e session.Event) bool { return e.Type == session.TypeSessionTitle }) {
		t := foldTitleColumns(events)
		a.title = &t
	}
	w.inter.addAppend(a)
	return true, w.commitIfFull(ctx)
}

// finish hands what is left to the final batch.
func (w *feedWork) finish() {
	for _, c := range w.inter.upserts {
		w.bt.addUpsert(c)
	}
	for _, a := range w.inter.appends {
		w.bt.addAppend(a)
	}
	w.inter = batch{}
}

func (w *feedWork) report(done, total int) {
	if w.progress != nil {
		w.progress(done, total)
	}
}

// feedView looks persisted ids up one at a time through the feed.
type feedView struct {
	feed    ChangeFeed
	b       sessionquery.Binding
	ix      *Index
	snaps   map[string]*sessionquery.PersistedSnapshot // nil value: not found
	touched map[string]bool
}

func (v *feedView) snapshot(ctx context.Context, id string) (*sessionquery.PersistedSnapshot, bool, bool, error) {
	if s, ok := v.snaps[id]; ok {
		return s, s != nil, false, nil
	}
	snap, found, err := v.feed.Snapshot(ctx, id)
	if err != nil {
		retry, err := v.ix.backendFailure(ctx, v.b, err)
		return nil, false, retry, err
	}
	if err := checkCtx(ctx); err != nil {
		return nil, false, false, err
	}
	if !found {
		v.snaps[id] = nil
		return nil, false, false, nil
	}
	v.snaps[id] = &snap
	return &snap, true, false, nil
}

func (v *feedView) lookup(ctx context.Context, id string) (session.Header, bool, error) {
	s, found, retry, err := v.snapshot(ctx, id)
	if err != nil {
		return session.Header{}, false, err
	}
	if retry {
		// The backend was swapped while looking: observe it next time.
		return session.Header{}, false, nil
	}
	if !found {
		return session.Header{}, false, nil
	}
	return s.Header, true, nil
}

func (v *feedView) changed(id string) bool { return v.touched[id] }

// setOf is ids as a set.
func setOf(ids []string) map[string]bool {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}
