package searchindex

import (
	"context"
	"database/sql"
)

// maxCachedStatements bounds the prepared-statement cache; search SQL
// varies only with the shape of the request's filters, so a handful of
// statements serve almost every search.
const maxCachedStatements = 64

// stmt returns a prepared statement for query on the pinned connection,
// preparing it once: parsing the search SQL costs more than running it
// for a selective query.
func (d *database) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	return d.prepared(ctx, &d.stmts, maxCachedStatements, query)
}

// writeStmt returns a write transaction's prepared statement for query.
// Writes reuse their statements across transactions (a build commits
// hundreds), in a cache of their own so that they never evict the
// searches'; their SQL is fixed, so the cache needs no bound.
func (d *database) writeStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	return d.prepared(ctx, &d.writes, 0, query)
}

// prepared returns query's statement from cache, preparing it the first
// time; with limit > 0, the cache drops one statement when full.
func (d *database) prepared(ctx context.Context, cache *map[string]*sql.Stmt, limit int, query string) (*sql.Stmt, error) {
	if st, ok := (*cache)[query]; ok {
		return st, nil
	}
	st, err := d.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if *cache == nil {
		*cache = map[string]*sql.Stmt{}
	}
	if limit > 0 && len(*cache) >= limit {
		for q, old := range *cache {
			old.Close()
			delete(*cache, q)
			break
		}
	}
	(*cache)[query] = st
	return st, nil
}

// QueryContext runs a cached statement.
func (d *database) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return cached{d: d}.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a cached single-row statement.
func (d *database) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return cached{d: d}.QueryRowContext(ctx, query, args...)
}

// ExecContext runs a cached statement that returns no rows.
func (d *database) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return cached{d: d}.ExecContext(ctx, query, args...)
}

// cached runs statements prepared once: the searches' (stmt), or with
// write the write transactions' (writeStmt), such as the term summaries'
// and phrase records' reads and writes, one of each per block or session
// a transaction changes (63 blocks for 1,000 events appended to 10 of the
// large preset's sessions).
type cached struct {
	d     *database
	write bool
}

func (c cached) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if c.write {
		return c.d.writeStmt(ctx, query)
	}
	return c.d.stmt(ctx, query)
}

func (c cached) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (c cached) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		// A Row carrying the error, so Scan reports it.
		return c.d.conn.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (c cached) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (d *database) closeStatements() {
	for _, cache := range []map[string]*sql.Stmt{d.stmts, d.writes} {
		for q, st := range cache {
			st.Close()
			delete(cache, q)
		}
	}
}
