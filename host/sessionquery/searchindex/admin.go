package searchindex

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	sqlite "modernc.org/sqlite"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// Status describes the index for `dsh index status`.
type Status struct {
	// Path is the database file (":memory:" for an in-memory index).
	Path string `json:"path"`
	// Sessions and Events count what the persisted index holds.
	Sessions int   `json:"sessions"`
	Events   int64 `json:"events"`
	// SizeBytes is the database file plus its write-ahead log.
	SizeBytes int64 `json:"sizeBytes"`
	// LagSessions counts persisted sessions whose logs changed since the
	// index last caught up (new, changed or deleted).
	LagSessions int `json:"lagSessions"`
}

// Status reports the index without updating it.
func (ix *Index) Status(ctx context.Context) (Status, error) {
	if err := ix.beginCatalog(ctx); err != nil {
		return Status{}, err
	}
	defer ix.queue.release()
	st := Status{Path: ix.cfg.Path}
	c := ix.db.conn
	if err := c.QueryRowContext(ctx, `SELECT sessions, events FROM catalog_totals`).Scan(&st.Sessions, &st.Events); err != nil {
		return Status{}, ix.queryFailed(err)
	}
	if ix.db.path != "" {
		for _, p := range []string{ix.db.path, ix.db.path + "-wal"} {
			fi, err := os.Stat(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return Status{}, indexFailed(err, "session-search index status failed: %s", err.Error())
			}
			st.SizeBytes += fi.Size()
		}
	}
	lag, err := ix.lag(ctx)
	if err != nil {
		return Status{}, err
	}
	st.LagSessions = lag
	return st, nil
}

// lag counts the persisted sessions a search would (re)index or drop. An
// index that trusts its journal cursor (see observeFeed) looks only at
// what the journal and the drift checks name, as a search would; any
// other compares a full listing with the indexed revisions.
func (ix *Index) lag(ctx context.Context) (int, error) {
	p := ix.svc.Binding().Persistence
	if p == nil {
		return 0, nil
	}
	if feed, ok := p.(ChangeFeed); ok {
		n, trusted, err := ix.feedLag(ctx, feed)
		if err != nil || trusted {
			return n, err
		}
	}
	snaps, err := p.List(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return 0, aborted(ctx)
		}
		return 0, sessionquery.Wrap(sessionquery.CodePersistenceFailed, err, "session-search persistence observation failed: %s", detail(err))
	}
	indexed, err := ix.indexedRevisions(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range snaps {
		if rev, ok := indexed[s.Header.ID]; !ok || rev != s.Revision {
			n++
		}
		delete(indexed, s.Header.ID)
	}
	return n + len(indexed), nil
}

// Rebuild indexes every persisted log again from nothing, reporting
// sessions examined out of the total as it goes. A file index is built
// beside the old one (a temporary database next to it, on no lock of the
// old one) and then copied over it in one SQLite transaction, so every
// process keeps searching the old index until the new one is complete, and
// an interrupted rebuild leaves the old index as it was.
func (ix *Index) Rebuild(ctx context.Context, progress func(done, total int)) error {
	if ix.cfg.Path == MemoryPath {
		return ix.rebuildInPlace(ctx, progress)
	}
	tmp, err := ix.buildBeside(ctx, progress, func(ctx context.Context) (int64, error) {
		if err := ix.begin(ctx); err != nil {
			return 0, err
		}
		defer ix.queue.release()
		return ix.generation(ctx)
	})
	if tmp != "" {
		defer removeDatabase(tmp)
	}
	if err != nil {
		return err
	}
	if err := ix.begin(ctx); err != nil {
		return err
	}
	defer ix.queue.release()
	if err := ix.swapIn(ctx, tmp); err != nil {
		return ix.reconcileFailed(ctx, err)
	}
	// Catch up with what changed while the new index was built.
	_, err = ix.reconcile(ctx, nil)
	return err
}

// staleRebuildAge is how old a leftover temporary rebuild file (of a
// rebuild that crashed) must be before another rebuild removes it.
const staleRebuildAge = 24 * time.Hour

// fillsBeside reports whether a full listing that found the index empty
// and jobs logs to read fills it beside (fillBeside) rather than in place:
// an index this process found empty (ix.bulk), in a file others may share,
// and a history that is a bulk load (bulkSessions logs or more).
func (ix *Index) fillsBeside(indexed, jobs int) bool {
	return ix.bulk != nil && !ix.private && ix.cfg.Path != MemoryPath && indexed == 0 && jobs >= bulkSessions
}

// errFillBeside stops a reconciliation attempt whose full listing found
// an empty index to fill beside; reconcileNow fills it and starts over.
var errFillBeside = errors.New("the index is filled beside it")

// fillBeside fills an empty index the way Rebuild fills its new file:
// built beside it, then copied in. Filled in place instead, batch by
// batch through the write-ahead log, the tiny preset's 50,000 logs took
// as long and left a file 1.16 times their size (107 MiB of it pages
// freed by FTS5's merges, which a live index never gives back, see
// moved) with its segments unmerged, which the next writes then merged,
// some of them for hundreds of milliseconds. The caller holds the queue;
// the attempt that follows catches up with what changed meanwhile.
func (ix *Index) fillBeside(ctx context.Context, progress func(done, total int)) error {
	ix.bulk = nil // filled once; later writes are incremental
	// The new file's index reconciles on its own, not under the OneLook
	// whose reconciliation this is (it holds that look's lock).
	built := context.WithValue(ctx, oneLookKey{}, (*oneLook)(nil))
	tmp, err := ix.buildBeside(built, progress, ix.generation)
	if tmp != "" {
		defer removeDatabase(tmp)
	}
	if err != nil {
		return err
	}
	if err := ix.swapIn(ctx, tmp); err != nil {
		return ix.reconcileFailed(ctx, err)
	}
	return nil
}

// buildBeside builds a complete new index in a temporary file next to the
// configured one and returns its path. oldGen reads the configured
// index's generation once the build is done (see raiseGeneration).
func (ix *Index) buildBeside(ctx context.Context, progress func(done, total int), oldGen func(context.Context) (int64, error)) (string, error) {
	dir, base := filepath.Split(ix.cfg.Path)
	if old, err := filepath.Glob(filepath.Join(dir, base+".rebuild-*")); err == nil {
		for _, p := range old {
			if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > staleRebuildAge {
				_ = os.Remove(p)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", indexFailed(err, "session-search index rebuild failed: %s", err.Error())
	}
	f, err := os.CreateTemp(dir, base+".rebuild-*")
	if err != nil {
		return "", indexFailed(err, "session-search index rebuild failed: %s", err.Error())
	}
	tmp := f.Name()
	f.Close()
	defer boundBuildMemory()()
	// Nobody else knows the new file until it is copied in, and a crash
	// leaves only a file the next rebuild removes: it is written without
	// a write-ahead log (which would write every page twice), without a
	// rollback journal (see buildUnsynced) and without syncs, and switched
	// to the configured journal mode once complete.
	cfg := ix.cfg
	cfg.Path, cfg.OpenAt, cfg.JournalMode = tmp, OpenAtFirstSearch, "truncate"
	cfg.pageSize, cfg.private = filePageSize(ix.cfg.Path), true
	fresh, err := New(cfg, ix.svc, Options{Log: ix.log, Notice: ix.notice})
	if err != nil {
		return tmp, err
	}
	fresh.private = true
	err = fresh.buildUnsynced(ctx)
	if err == nil {
		err = fresh.Update(ctx, progress)
	}
	if err == nil {
		// Cursors minted on the old index must go stale on the new one:
		// its generation starts past the old one's.
		var gen int64
		if gen, err = oldGen(ctx); err == nil {
			err = fresh.raiseGeneration(ctx, gen)
		}
	}
	if err == nil {
		err = fresh.finishBuild(ctx, ix.cfg.JournalMode)
	}
	return tmp, errors.Join(err, fresh.Close())
}

// buildMemoryLimit is the soft limit of Go's memory while a file is built
// beside the index (a rebuild, or the first fill of an empty one), unless
// GOMEMLIMIT sets one or the program set a lower one. A build of many
// small logs keeps ~80 MB live (the listing of every log, the logs read
// ahead, their term summaries), and the default GC policy lets the heap
// reach twice that: the tiny preset's rebuild peaked at 308 MB RSS without
// a limit. With one, peak RSS is about the limit plus what SQLite, FTS5's
// in-memory index and the program hold beside the heap, ~60 MB with 64 KiB
// pages (newPageSize). The limit trades collections for memory; on the
// tiny preset (alternating runs) 150 MiB took 20.3 s on average for 216
// MB, 160 MiB 19.2 s for 226-228 MB and 170 MiB 19.4 s for 235-237 MB,
// and at 128 MiB the collector ran ~300 times. Above the limit the GC's
// share of CPU is capped, so a build that needs more still finishes.
const buildMemoryLimit = 160 << 20

// boundBuildMemory lowers Go's soft memory limit to buildMemoryLimit
// (see there) and returns what restores it.
func boundBuildMemory() (restore func()) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || debug.SetMemoryLimit(-1) <= buildMemoryLimit {
		return func() {}
	}
	prev := debug.SetMemoryLimit(buildMemoryLimit)
	return func() { debug.SetMemoryLimit(prev) }
}

// A rebuild's private file merges nothing while it is built: finishBuild
// merges all of its FTS5 segments into one, so any merge before that
// writes the same postings one more time. Each committed batch leaves a
// segment (one: the in-memory index, privateHashBytes, holds a whole
// batch), a few hundred on the bench's presets, and a level that reaches
// privateCrisisMerge segments is merged at once, as FTS5 refuses a
// 2,000th segment (levels of 512 reach that past ~750,000 batches). The
// defaults are restored before the file is copied in. Measured against
// the policy before (automerge 16, crisismerge 16, batches twice
// batchDocs), alternating binaries: the tiny preset's rebuild went from
// 25.0-28.1 s to 21.7-23.5 s, the large one's from 25.4-29.6 s to
// 22.0-23.4 s.
const (
	privateHashBytes   = 16 << 20
	ftsHashBytes       = 1 << 20 // FTS5's default hashsize
	privateCrisisMerge = 512
	ftsCrisisMerge     = 16 // FTS5's default crisismerge
	ftsAutomerge       = 4  // FTS5's default automerge
)

// buildUnsynced opens a private, new index for building: no syncs and no
// rollback journal (a failed build discards the file, so nothing is ever
// rolled back into it), and the FTS5 policy above.
func (ix *Index) buildUnsynced(ctx context.Context) error {
	if err := ix.begin(ctx); err != nil {
		return err
	}
	defer ix.queue.release()
	return ix.db.execAll(ctx,
		`PRAGMA synchronous = OFF`,
		`PRAGMA journal_mode = OFF`,
		`INSERT INTO persisted_fts(persisted_fts, rank) VALUES ('automerge', 0)`,
		fmt.Sprintf(`INSERT INTO persisted_fts(persisted_fts, rank) VALUES ('crisismerge', %d)`, privateCrisisMerge),
		fmt.Sprintf(`INSERT INTO persisted_fts(persisted_fts, rank) VALUES ('hashsize', %d)`, privateHashBytes))
}

// finishBuild merges the built FTS5 index into one segment, makes the
// catalog's order index when the catalog is big enough to have one (see
// orderIndexFrom), restores FTS5's policy and gives the built index the
// journal mode the live index runs with, so the copy into it changes
// nothing else. The built file is never synced: it is read once, through
// the same page cache, by the copy (swapIn), whose transaction the live
// index syncs, and a crash before that leaves only a file the next rebuild
// removes. Syncing it (the switch to WAL does under synchronous=NORMAL)
// took ~230 ms of a tiny rebuild.
//
// The merge frees the pages of the segments it merged (on the tiny preset
// 55 MiB of 647); the private file is made with incremental auto-vacuum
// (Config.private) so that they are given back here and not copied
// into the live file, which then carries the same setting (nothing runs
// its vacuum: a live index never shrinks its own file, see moved).
//
// The merge is paid once here, on the private file: left to automerge,
// the build's many segments (up to privateCrisisMerge a level) become
// eligible for merging as soon as the default policy is back, and the
// first incremental writes after a rebuild (a search catching up with a
// few appended events) each paid hundreds of milliseconds merging them.
func (ix *Index) finishBuild(ctx context.Context, journalMode string) error {
	if err := ix.begin(ctx); err != nil {
		return err
	}
	defer ix.queue.release()
	sessions, err := catalogSessions(ctx, ix.db.conn)
	if err != nil {
		return err
	}
	stmts := []string{`INSERT INTO persisted_fts(persisted_fts) VALUES ('optimize')`}
	if sessions >= orderIndexFrom {
		stmts = append(stmts, createOrderIndex)
	}
	err = ix.db.execAll(ctx, append(stmts,
		`PRAGMA incremental_vacuum`,
		fmt.Sprintf(`INSERT INTO persisted_fts(persisted_fts, rank) VALUES ('automerge', %d)`, ftsAutomerge),
		fmt.Sprintf(`INSERT INTO persisted_fts(persisted_fts, rank) VALUES ('crisismerge', %d)`, ftsCrisisMerge),
		fmt.Sprintf(`INSERT INTO persisted_fts(persisted_fts, rank) VALUES ('hashsize', %d)`, ftsHashBytes))...)
	if err != nil {
		return err
	}
	_, err = ix.db.setJournalMode(ctx, journalMode)
	return err
}

// generation reads the index's global generation; the caller holds the
// queue.
func (ix *Index) generation(ctx context.Context) (int64, error) {
	var gen int64
	if err := ix.db.conn.QueryRowContext(ctx, `SELECT global_generation FROM search_state WHERE singleton = 1`).Scan(&gen); err != nil {
		return 0, ix.reconcileFailed(ctx, err)
	}
	return gen, nil
}

// raiseGeneration moves this (new) index's generation past old, the
// generation of the index it will be copied into: cursors minted on that
// one go stale on this one.
func (ix *Index) raiseGeneration(ctx context.Context, old int64) error {
	if err := ix.begin(ctx); err != nil {
		return err
	}
	defer ix.queue.release()
	_, err := ix.db.conn.ExecContext(ctx, `UPDATE search_state SET global_generation = global_generation + ? + 1 WHERE singleton = 1`, old)
	return err
}

// swapIn copies the database at tmp over the open one with SQLite's
// backup API: one write transaction on the real file, so readers of other
// processes see the old index or the new one, never a mix, and the WAL and
// locks stay SQLite's.
func (ix *Index) swapIn(ctx context.Context, tmp string) error {
	type restorer interface {
		NewRestore(srcURI string) (*sqlite.Backup, error)
	}
	ctx = context.WithoutCancel(ctx) // a started copy runs to its end
	err := ix.db.conn.Raw(func(dc any) error {
		r, ok := dc.(restorer)
		if !ok {
			return errors.New("the SQLite driver cannot restore a backup")
		}
		b, err := r.NewRestore("file:" + uriEscape(tmp))
		if err != nil {
			return err
		}
		for {
			more, err := b.Step(-1)
			if err != nil {
				return errors.Join(err, b.Finish())
			}
			if !more {
				return b.Finish()
			}
		}
	})
	if err != nil {
		return err
	}
	// The copy went through the write-ahead log; fold it into the file
	// and truncate the log now rather than keep the index twice on disk
	// until the last connection closes (readers still on the old pages
	// make this a no-op, which is fine).
	_, _ = ix.db.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	// The live overlay, if this connection made it, starts empty.
	if ix.db.overlaid {
		if _, err := ix.db.conn.ExecContext(ctx, `DROP TABLE IF EXISTS live_fts; DROP TABLE IF EXISTS live_docs; DROP TABLE IF EXISTS live_sessions;`+tempSchema); err != nil {
			return err
		}
	}
	if ident, size, err := identify(ix.db.path); err == nil {
		ix.db.ident, ix.db.minSize = ident, size
	}
	ix.live = map[string]liveRow{}
	ix.seenBinding = false
	ix.listed = true // the new index was listed in full moments ago
	ix.memGen++
	return ix.loadGeneration(ctx)
}

// rebuildInPlace is Rebuild for an in-memory index, which no other
// process shares.
func (ix *Index) rebuildInPlace(ctx context.Context, progress func(done, total int)) error {
	if err := ix.begin(ctx); err != nil {
		return err
	}
	defer ix.queue.release()
	err := ix.db.immediate(context.WithoutCancel(ctx), func() error {
		c := ix.db.conn
		for _, stmt := range []string{
			`DROP TABLE IF EXISTS persisted_fts`,
			`DROP TABLE IF EXISTS persisted_docs`,
			`DROP TABLE IF EXISTS persisted_sessions`,
			`DROP TABLE IF EXISTS catalog_totals`,
			`DROP TABLE IF EXISTS pending_sessions`,
			`DROP TABLE IF EXISTS open_writers`,
			`DROP TABLE IF EXISTS workspace_dirs`,
			`DROP TABLE IF EXISTS live_fts`,
			`DROP TABLE IF EXISTS live_docs`,
			`DROP TABLE IF EXISTS live_sessions`,
			mainSchema,
			tempSchema,
			`UPDATE search_state SET global_generation = global_generation + 1, feed_source = NULL, feed_cursor = NULL WHERE singleton = 1`,
		} {
			if _, err := c.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ix.reconcileFailed(ctx, err)
	}
	ix.db.overlaid, ix.db.vocabulary = true, true
	ix.live = map[string]liveRow{}
	ix.seenBinding = false
	ix.listed = false
	ix.memGen++
	_, err = ix.reconcile(ctx, progress)
	return err
}

// EventCounts brings the index up to date and returns the number of events
// of every session it holds (live ones from this process included).
func (ix *Index) EventCounts(ctx context.Context) (map[string]int, error) {
	if err := ix.begin(ctx); err != nil {
		return nil, err
	}
	defer ix.queue.release()
	if _, err := ix.reconcile(ctx, nil); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, table := range []string{"persisted_sessions", "live_sessions"} {
		rows, err := ix.db.conn.QueryContext(ctx, `SELECT session_id, event_count FROM `+table)
		if err != nil {
			return nil, ix.queryFailed(err)
		}
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return nil, ix.queryFailed(err)
			}
			out[id] = n
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, ix.queryFailed(err)
		}
	}
	return out, nil
}

// Sync brings the index up to date with the live sessions and the mounted
// persistence now, as every search does first.
func (ix *Index) Sync(ctx context.Context) error { return ix.Update(ctx, nil) }

// Update is Sync reporting progress while it indexes logs (only a listing
// of the whole corpus reports; following the journal is quick).
func (ix *Index) Update(ctx context.Context, progress func(done, total int)) error {
	if err := ix.begin(ctx); err != nil {
		return err
	}
	defer ix.queue.release()
	_, err := ix.reconcile(ctx, progress)
	return err
}

// feedLag is lag from the journal and the drift checks; trusted is false
// when the index would list everything on its next search.
func (ix *Index) feedLag(ctx context.Context, feed ChangeFeed) (int, bool, error) {
	st, err := ix.readFeedState(ctx)
	if err != nil {
		return 0, false, err
	}
	probe, _ := feed.(DriftProbe)
	if !ix.trusts(st, feed, probe) {
		return 0, false, nil
	}
	ids, _, reset, err := feed.FeedChanges(*st.cursor)
	if err != nil || reset {
		return 0, false, err
	}
	pending, err := ix.readPending(ctx)
	if err != nil {
		return 0, false, err
	}
	d, err := ix.findDrift(ctx, probe)
	if err != nil {
		return 0, false, err
	}
	seen := map[string]bool{}
	n := 0
	for _, id := range slices.Concat(ids, pending, d.ids) {
		if seen[id] {
			continue
		}
		seen[id] = true
		snap, found, err := feed.Snapshot(ctx, id)
		if err != nil {
			return 0, false, sessionquery.Wrap(sessionquery.CodePersistenceFailed, err, "session-search persistence observation failed: %s", detail(err))
		}
		rev, indexed, err := ix.indexedRevision(ctx, id)
		if err != nil {
			return 0, false, err
		}
		if found != indexed || (found && rev != snap.Revision) {
			n++
		}
	}
	return n, true, nil
}

// VerifyReport is what Verify found: the logs whose catalog rows were
// missing, stale or orphaned. Verify repairs all of them.
type VerifyReport struct {
	// Sessions counts the persisted logs listed.
	Sessions int `json:"sessions"`
	// Added are logs the index did not hold, Changed logs whose indexed
	// revision differs from the file, Removed rows whose log is gone.
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
}

// Drifted reports whether the index differed from the logs.
func (r VerifyReport) Drifted() bool { return len(r.Added)+len(r.Changed)+len(r.Removed) > 0 }

// Verify lists every persisted log, reports where the index differs from
// it (whatever the journal and the cheap drift checks missed: a log edited
// in place, a record lost in a crash) and repairs it with a full
// reconciliation, reporting progress like Rebuild.
func (ix *Index) Verify(ctx context.Context, progress func(done, total int)) (VerifyReport, error) {
	rep := VerifyReport{Added: []string{}, Changed: []string{}, Removed: []string{}}
	if err := ix.begin(ctx); err != nil {
		return rep, err
	}
	defer ix.queue.release()
	p := ix.svc.Binding().Persistence
	if p == nil {
		return rep, nil
	}
	snaps, err := p.List(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return rep, aborted(ctx)
		}
		return rep, sessionquery.Wrap(sessionquery.CodePersistenceFailed, err, "session-search persistence observation failed: %s", detail(err))
	}
	indexed, err := ix.indexedRevisions(ctx)
	if err != nil {
		return rep, err
	}
	l0 := ix.liveRefs()
	rep.Sessions = len(snaps)
	for _, s := range snaps {
		id := s.Header.ID
		rev, ok := indexed[id]
		delete(indexed, id)
		switch {
		case ix.isLive(l0, id):
		case !ok:
			rep.Added = append(rep.Added, id)
		case rev != s.Revision:
			rep.Changed = append(rep.Changed, id)
		}
	}
	for id := range indexed {
		rep.Removed = append(rep.Removed, id)
	}
	slices.Sort(rep.Removed)
	ix.forceFull = true
	defer func() { ix.forceFull = false }()
	_, err = ix.reconcile(ctx, progress)
	return rep, err
}
