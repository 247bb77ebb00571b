package searchindex

import (
	"context"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

var _ sessionquery.Catalog = (*Index)(nil)

// Summaries brings the index up to date and returns one page of the
// catalog, newest first: this process's live sessions overlaid on the
// persisted ones (a live row wins), read from the catalog columns alone.
func (ix *Index) Summaries(ctx context.Context, req sessionquery.SummaryRequest) (sessionquery.SummaryPage, error) {
	var page sessionquery.SummaryPage
	err := ix.catalogRead(ctx, req.Cwds == nil, func(q querier, persisted bool) error {
		where, args := summaryWhere(req, false)
		from := summarySource(persisted, len(ix.live) > 0)
		var err error
		if where == "" && persisted && len(ix.live) == 0 {
			page.Total, err = catalogSessions(ctx, q) // every persisted session
		} else {
			err = q.QueryRowContext(ctx, `SELECT count(*) FROM (`+from+`)`+where, args...).Scan(&page.Total)
		}
		if err != nil {
			return err
		}
		where, args = summaryWhere(req, true)
		query := `SELECT ` + summaryColumns + `, live, persisted FROM (` + from + `)` + where +
			` ORDER BY created_at DESC, session_id`
		if req.Limit > 0 {
			query += ` LIMIT ?`
			args = append(args, req.Limit+1)
		}
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var live, persistedRow bool
			sum, err := scanSummaryWith(rows, &live, &persistedRow)
			if err != nil {
				return err
			}
			sum.Live, sum.Persisted = live, persistedRow
			page.Items = append(page.Items, sum)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if req.Limit > 0 && len(page.Items) > req.Limit {
			page.Items, page.More = page.Items[:req.Limit], true
		}
		return nil
	})
	return page, err
}

// SummariesOf brings the index up to date and returns the catalogued
// summaries of ids.
func (ix *Index) SummariesOf(ctx context.Context, ids []string) (map[string]sessionquery.SessionSummary, error) {
	out := make(map[string]sessionquery.SessionSummary, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err := ix.catalogRead(ctx, false, func(q querier, persisted bool) error {
		from := summarySource(persisted, len(ix.live) > 0)
		for start := 0; start < len(ids); start += 500 {
			chunk := ids[start:min(len(ids), start+500)]
			args := make([]any, len(chunk))
			for i, id := range chunk {
				args[i] = id
			}
			rows, err := q.QueryContext(ctx, `SELECT `+summaryColumns+`, live, persisted FROM (`+from+`)
				WHERE session_id IN (?`+strings.Repeat(`, ?`, len(chunk)-1)+`)`, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var live, persistedRow bool
				sum, err := scanSummaryWith(rows, &live, &persistedRow)
				if err != nil {
					rows.Close()
					return err
				}
				sum.Live, sum.Persisted = live, persistedRow
				out[sum.Header.ID] = sum
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// catalogRead catches up and runs fn in one read transaction; persisted
// says whether persisted rows are visible (a persistence is mounted).
// ordered asks for the index that orders every workspace's sessions.
func (ix *Index) catalogRead(ctx context.Context, ordered bool, fn func(q querier, persisted bool) error) error {
	if err := ix.beginCatalog(ctx); err != nil {
		return err
	}
	defer ix.queue.release()
	b, err := ix.reconcile(ctx, nil)
	if err != nil {
		return err
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if ordered {
		ix.ensureOrderIndex(ctx)
	}
	return ix.read(ctx, func(q querier) error { return fn(q, b.Persistence != nil) })
}

// orderIndexFrom is the catalog size from which a page of every
// workspace's sessions is read through persisted_sessions_order(created_at
// DESC, session_id): without it, the newest 50 sessions are a scan and a
// sort of every catalog row (on 50,000 sessions ~8,000 page reads and
// ~150 ms of CPU). It is made by the first such page, not with the
// schema, so that a fresh index stays a few pages small (a process under a
// small file-size limit still opens it) and a small catalog, which sorts
// in a moment, never carries it. A rebuild of a catalog that size makes it
// in the built file (finishBuild), so that the first listing after the
// rebuild does not sort the catalog to make it.
const orderIndexFrom = 512

// catalogSessions is the number of persisted sessions, from the
// catalog's totals.
func catalogSessions(ctx context.Context, q querier) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT sessions FROM catalog_totals`).Scan(&n)
	return n, err
}

// createOrderIndex makes persisted_sessions_order.
const createOrderIndex = `CREATE INDEX IF NOT EXISTS persisted_sessions_order ON persisted_sessions(created_at DESC, session_id)`

// ensureOrderIndex makes persisted_sessions_order once the catalog holds
// orderIndexFrom sessions. It is an optimisation: a failure is logged and
// the page is read without it.
func (ix *Index) ensureOrderIndex(ctx context.Context) {
	db := ix.db
	if db.ordered {
		return
	}
	var exists int
	err := db.conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'persisted_sessions_order'`).Scan(&exists)
	if err == nil && exists == 0 {
		var sessions int
		sessions, err = catalogSessions(ctx, db.conn)
		if err == nil && sessions < orderIndexFrom {
			return // small yet: look again on a later page
		}
		if err == nil {
			err = db.immediate(ctx, func() error {
				_, err := db.conn.ExecContext(ctx, createOrderIndex)
				return err
			})
		}
	}
	if err != nil && ctx.Err() != nil {
		return
	}
	if err != nil {
		ix.log.Warn("session-search index: cannot add the index that orders the catalog; listings of every workspace sort it instead", "err", err)
	}
	db.ordered = true
}

// summarySource is the catalog as one relation: live rows (with the log
// size of their persisted copy), then persisted rows no live row hides.
// Without live rows it is the persisted table itself, so its indexes
// order and bound a page.
func summarySource(persisted, hasLive bool) string {
	const persistedRows = `SELECT session_id, created_at, cwd, ` + summaryColumns + `, 0 AS live, 1 AS persisted FROM persisted_sessions`
	if !hasLive {
		if !persisted {
			return persistedRows + ` WHERE 0`
		}
		return persistedRows
	}
	live := `SELECT session_id, created_at, cwd, header, event_count, title, title_error_seq, title_error, last_event_at,
		coalesce((SELECT p.log_bytes FROM persisted_sessions p WHERE p.session_id = live_sessions.session_id), 0) AS log_bytes,
		unreadable, invalid, 1 AS live, persisted FROM temp.live_sessions`
	if !persisted {
		return live
	}
	return live + ` UNION ALL ` + persistedRows + ` WHERE session_id NOT IN (SELECT session_id FROM temp.live_sessions)`
}

// prefixSuccessor is the least string greater than every string that
// starts with p: p with its last byte below 0xff incremented and what
// follows it dropped (false when p is all 0xff bytes: no bound).
func prefixSuccessor(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

// summaryWhere renders the request's workspace and position conditions.
func summaryWhere(req sessionquery.SummaryRequest, positioned bool) (string, []any) {
	var conds []string
	var args []any
	switch {
	case req.Cwds != nil && len(req.Cwds) == 0:
		conds = append(conds, `0`) // no workspace form: nothing matches
	case req.Cwds != nil:
		conds = append(conds, `cwd IN (`+strings.TrimSuffix(strings.Repeat("?,", len(req.Cwds)), ",")+`)`)
		for _, c := range req.Cwds {
			args = append(args, c)
		}
	}
	if req.RequireCwd {
		conds = append(conds, `cwd IS NOT NULL`)
	}
	if req.IDPrefix != "" {
		// A range of the session_id index, not a scan: ids compare
		// bytewise (BINARY), so the prefix's successor bounds it.
		conds = append(conds, `session_id >= ?`)
		args = append(args, req.IDPrefix)
		if upper, ok := prefixSuccessor(req.IDPrefix); ok {
			conds = append(conds, `session_id < ?`)
			args = append(args, upper)
		}
	}
	if positioned && req.After != nil {
		conds = append(conds, `(created_at < ? OR (created_at = ? AND session_id > ?))`)
		args = append(args, req.After.CreatedAt, req.After.CreatedAt, req.After.ID)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return ` WHERE ` + strings.Join(conds, ` AND `), args
}
