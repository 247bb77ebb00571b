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
	if st, ok := d.stmts[query]; ok {
		return st, nil
	}
	st, err := d.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if d.stmts == nil {
		d.stmts = map[string]*sql.Stmt{}
	}
	if len(d.stmts) >= maxCachedStatements {
		for q, old := range d.stmts {
			old.Close()
			delete(d.stmts, q)
			break
		}
	}
	d.stmts[query] = st
	return st, nil
}

// QueryContext runs a cached statement.
func (d *database) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := d.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs a cached single-row statement.
func (d *database) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := d.stmt(ctx, query)
	if err != nil {
		// A Row carrying the error, so Scan reports it.
		return d.conn.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// ExecContext runs a cached statement that returns no rows.
func (d *database) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := d.stmt(ctx, query)
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
