package ftsoracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	_ "modernc.org/sqlite"
)

// Oracle is one in-memory FTS5 table.
type Oracle struct {
	db *sql.DB
}

// Open makes the table, tokenizing with tokenizer (an FTS5 tokenize
// option, e.g. "unicode61 remove_diacritics 2").
func Open(ctx context.Context, tokenizer string) (*Oracle, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one connection: the in-memory database
	for _, q := range []string{
		`CREATE VIRTUAL TABLE temp.t USING fts5(x, tokenize='` + tokenizer + `')`,
		`CREATE VIRTUAL TABLE temp.v USING fts5vocab(temp, t, 'instance')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return &Oracle{db: db}, nil
}

// Close releases the table.
func (o *Oracle) Close() error { return o.db.Close() }

// Index replaces the table's documents with docs, as rowids 1.., in one
// transaction, and returns the size in tokens FTS5 recorded for each.
func (o *Oracle) Index(ctx context.Context, docs []string) ([]int, error) {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM t`); err != nil {
		return nil, err
	}
	for i, d := range docs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO t(rowid, x) VALUES (?, ?)`, i+1, d); err != nil {
			return nil, fmt.Errorf("index %q: %w", d, err)
		}
	}
	sizes := make([]int, len(docs))
	rows, err := tx.QueryContext(ctx, `SELECT id, sz FROM t_docsize`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var sz []byte
		if err := rows.Scan(&id, &sz); err != nil {
			return nil, err
		}
		n, k := uvarint(sz)
		if k != len(sz) || id < 1 || id > len(docs) {
			return nil, fmt.Errorf("docsize %x of document %d is not one varint of a document indexed", sz, id)
		}
		sizes[id-1] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return sizes, tx.Commit()
}

// Terms returns the terms of the documents last indexed (sizes as Index
// returned them), by position, each document as long as its size, with
// none where FTS5 stored no term.
func (o *Oracle) Terms(ctx context.Context, sizes []int, none string) ([][]string, error) {
	out := make([][]string, len(sizes))
	seen := make([][]bool, len(sizes))
	for i, n := range sizes {
		out[i], seen[i] = make([]string, n), make([]bool, n)
		for k := range out[i] {
			out[i][k] = none
		}
	}
	rows, err := o.db.QueryContext(ctx, `SELECT doc, offset, term FROM v`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var doc, pos int
		var term []byte
		if err := rows.Scan(&doc, &pos, &term); err != nil {
			return nil, err
		}
		if doc < 1 || doc > len(out) || pos < 0 || pos >= len(out[doc-1]) || seen[doc-1][pos] {
			return nil, fmt.Errorf("term %q of document %d at position %d: out of range or twice", term, doc, pos)
		}
		seen[doc-1][pos] = true
		out[doc-1][pos] = string(term)
	}
	return out, rows.Err()
}

// Highlight returns FTS5's highlight() of the first document indexed for
// query (an FTS5 MATCH expression), with open and close around each match,
// and whether it matches at all.
func (o *Oracle) Highlight(ctx context.Context, query, open, close string) (string, bool, error) {
	var marked string
	err := o.db.QueryRowContext(ctx, `SELECT highlight(t, 0, ?, ?) FROM t WHERE t MATCH ? AND rowid = 1`, open, close, query).Scan(&marked)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return marked, err == nil, err
}

// uvarint decodes an SQLite varint, as FTS5 stores a column's size; n is
// the bytes read.
func uvarint(b []byte) (v, n int) {
	for i, c := range b {
		if i == 8 {
			return v<<8 | int(c), 9
		}
		v = v<<7 | int(c&0x7f)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return v, len(b)
}

// SQLiteVersion is the version of the SQLite asked.
func (o *Oracle) SQLiteVersion(ctx context.Context) (string, error) {
	var v string
	err := o.db.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&v)
	return v, err
}
