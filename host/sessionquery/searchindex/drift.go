package searchindex

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// openWriter is a session whose writer announced itself in the journal
// and may still be running.
type openWriter struct{ id, path string }

// verifyBatch is how many catalogued logs each reconciliation re-stats
// (round robin from a random place per process), so an edit in place that
// nothing else announces is seen within about sessions/verifyBatch
// searches of any process, at a constant cost per search.
const verifyBatch = 16

// racyWindow is how recent a directory's modification time may be and
// still be trusted as "nothing changed since": a change within the same
// timestamp tick as our look would be invisible, so a directory touched
// this recently is looked at again next time (as git does with racy
// index entries).
const racyWindow = 2 * time.Second

// drift is what one reconciliation learned beyond the journal.
type drift struct {
	ids        []string         // sessions to look at again, maybe twice (incremental merges them)
	stamps     []store.DirStamp // the directory stamps to store (nil: unchanged)
	writersDel []string         // announced writers that are gone
	probe      DriftProbe       // nil when the backend has none
	stored     map[string]int64 // the stamps as stored before
}

// findDrift gathers the sessions the journal does not name but that may
// have changed: writers that died, sessions added or removed behind dsh's
// back (a changed workspace directory) and a bounded batch of re-stats.
func (ix *Index) findDrift(ctx context.Context, probe DriftProbe) (*drift, error) {
	d := &drift{probe: probe}
	if probe == nil {
		return d, nil
	}
	add := func(id string) { d.ids = append(d.ids, id) }
	writers, err := ix.readOpenWriters(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range writers {
		if !probe.WriterRunning(w.path) {
			add(w.id)
			d.writersDel = append(d.writersDel, w.id)
		}
	}
	if err := ix.scanDirs(ctx, d, add); err != nil {
		return nil, err
	}
	ids, err := ix.verifySome(ctx, probe)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		add(id)
	}
	return d, nil
}

// scanDirs compares the workspace directories' stamps with the stored
// ones and, for each that changed, its session ids with the catalog's.
func (ix *Index) scanDirs(ctx context.Context, d *drift, add func(string)) error {
	stamps, err := d.probe.WorkspaceStamps()
	if err != nil {
		return sourceFailed(err)
	}
	stored, err := ix.readStamps(ctx)
	if err != nil {
		return err
	}
	d.stored = stored
	seen := map[string]bool{}
	changed := false
	for _, s := range stamps {
		seen[s.Name] = true
		if m, ok := stored[s.Name]; ok && m == s.ModTime {
			continue
		}
		changed = true
		if s.Name == "" {
			continue // the root: new or removed directories are compared below
		}
		onDisk, err := d.probe.WorkspaceSessions(s.Name)
		if err != nil {
			return sourceFailed(err)
		}
		catalogued, err := ix.idsInDir(ctx, s.Name)
		if err != nil {
			return err
		}
		for _, id := range symmetricDifference(onDisk, catalogued) {
			add(id)
		}
	}
	for name := range stored {
		if seen[name] || name == "" {
			continue
		}
		changed = true
		catalogued, err := ix.idsInDir(ctx, name)
		if err != nil {
			return err
		}
		for _, id := range catalogued {
			add(id)
		}
	}
	if trusted := trustedStamps(stamps); changed && !sameStamps(trusted, stored) {
		d.stamps = trusted
	}
	return nil
}

// symmetricDifference returns the ids in exactly one of a and b, in
// sorted order (it sorts both). A workspace directory holds hundreds of
// sessions: compared one by one with slices.Contains, each changed
// directory cost a few milliseconds.
func symmetricDifference(a, b []string) []string {
	slices.Sort(a)
	slices.Sort(b)
	var out []string
	for len(a) > 0 && len(b) > 0 {
		switch c := strings.Compare(a[0], b[0]); {
		case c < 0:
			out, a = append(out, a[0]), a[1:]
		case c > 0:
			out, b = append(out, b[0]), b[1:]
		default:
			a, b = a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// sameStamps reports whether the stamps to store are the stored ones.
func sameStamps(stamps []store.DirStamp, stored map[string]int64) bool {
	if len(stamps) != len(stored) {
		return false
	}
	for _, s := range stamps {
		if m, ok := stored[s.Name]; !ok || m != s.ModTime {
			return false
		}
	}
	return true
}

// trustedStamps drops the stamps too recent to trust (see racyWindow), so
// those directories are compared again next time.
func trustedStamps(stamps []store.DirStamp) []store.DirStamp {
	limit := time.Now().Add(-racyWindow).UnixNano()
	out := make([]store.DirStamp, 0, len(stamps))
	for _, s := range stamps {
		if s.ModTime < limit {
			out = append(out, s)
		}
	}
	return out
}

// verifySome re-stats the next verifyBatch catalogued logs and returns the
// ids whose revision differs or whose log is gone.
func (ix *Index) verifySome(ctx context.Context, probe DriftProbe) ([]string, error) {
	rows, err := ix.db.conn.QueryContext(ctx, `SELECT session_key, session_id, log_path, revision FROM persisted_sessions
		WHERE session_key > ? AND log_path != '' ORDER BY session_key LIMIT ?`, ix.verifyAfter, verifyBatch)
	if err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	type row struct {
		key            int64
		id, path, revn string
	}
	var batch []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.key, &r.id, &r.path, &r.revn); err != nil {
			rows.Close()
			return nil, ix.reconcileFailed(ctx, err)
		}
		batch = append(batch, r)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	if len(batch) < verifyBatch {
		ix.verifyAfter = 0 // wrap around
	} else {
		ix.verifyAfter = batch[len(batch)-1].key
	}
	var out []string
	for _, r := range batch {
		rev, _, err := probe.RevisionAt(r.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, r.id)
		case err != nil:
			// Unreadable now: the full look (Snapshot) reports it.
			out = append(out, r.id)
		case rev != r.revn:
			out = append(out, r.id)
		}
	}
	return out, nil
}

func (ix *Index) readOpenWriters(ctx context.Context) ([]openWriter, error) {
	rows, err := ix.db.conn.QueryContext(ctx, `SELECT session_id, log_path FROM open_writers ORDER BY session_id`)
	if err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	defer rows.Close()
	var out []openWriter
	for rows.Next() {
		var w openWriter
		if err := rows.Scan(&w.id, &w.path); err != nil {
			return nil, ix.reconcileFailed(ctx, err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	return out, nil
}

func (ix *Index) readStamps(ctx context.Context) (map[string]int64, error) {
	rows, err := ix.db.conn.QueryContext(ctx, `SELECT name, mtime FROM workspace_dirs`)
	if err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var m int64
		if err := rows.Scan(&name, &m); err != nil {
			return nil, ix.reconcileFailed(ctx, err)
		}
		out[name] = m
	}
	if err := rows.Err(); err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	return out, nil
}

func (ix *Index) idsInDir(ctx context.Context, dir string) ([]string, error) {
	return ix.queryIDs(ctx, `SELECT session_id FROM persisted_sessions WHERE workspace_dir = ?`, dir)
}

// queryIDs runs a query of one text column and returns its values; a
// failure is a reconciliation failure.
func (ix *Index) queryIDs(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := ix.db.conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, ix.reconcileFailed(ctx, err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, ix.reconcileFailed(ctx, err)
	}
	return out, nil
}

// sourceFailed wraps a failed look at the backend's directories.
func sourceFailed(err error) error {
	return sessionquery.Wrap(sessionquery.CodePersistenceFailed, err, "session-search persistence observation failed: %s", detail(err))
}
