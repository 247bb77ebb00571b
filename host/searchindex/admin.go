package searchindex

import (
	"context"
	"errors"
	"io/fs"
	"os"

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
	if err := ix.begin(ctx); err != nil {
		return Status{}, err
	}
	defer ix.queue.release()
	st := Status{Path: ix.cfg.Path}
	c := ix.db.conn
	if err := c.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(event_count), 0) FROM persisted_sessions`).Scan(&st.Sessions, &st.Events); err != nil {
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

// lag counts the persisted sessions a search would (re)index or drop: it
// compares a full listing with the indexed revisions, so it also sees what
// the change journal cannot (deleted logs, records lost in a crash).
func (ix *Index) lag(ctx context.Context) (int, error) {
	p := ix.svc.Binding().Persistence
	if p == nil {
		return 0, nil
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

// Rebuild discards everything the index holds and indexes every persisted
// log again, reporting sessions examined out of the total as it goes.
func (ix *Index) Rebuild(ctx context.Context, progress func(done, total int)) error {
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
			`DROP TABLE IF EXISTS pending_sessions`,
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
