package main

import (
	"context"
	"database/sql"
	"os"
	"time"

	_ "modernc.org/sqlite"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// bareIndex is the baseline: a minimal one-table FTS5 index of the same
// documents, with the session id as an unindexed column.
type bareIndex struct {
	db    *sql.DB
	build time.Duration // insert time only
	docs  int
}

func buildBare(ctx context.Context, path string, st *store.Store, reuse bool) (*bareIndex, error) {
	if _, err := os.Stat(path); reuse && err == nil {
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		return &bareIndex{db: db}, nil
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(wal)&_pragma=synchronous(normal)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	b := &bareIndex{db: db}
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE docs USING fts5(text, session_id UNINDEXED, tokenize='unicode61 remove_diacritics 2')`); err != nil {
		return nil, err
	}
	entries, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	var pending []sessionquery.Document
	flush := func() error {
		start := time.Now()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO docs(text, session_id) VALUES (?, ?)`)
		if err != nil {
			tx.Rollback()
			return err
		}
		for _, d := range pending {
			if _, err := stmt.ExecContext(ctx, d.Text, d.SessionID); err != nil {
				tx.Rollback()
				return err
			}
		}
		stmt.Close()
		if err := tx.Commit(); err != nil {
			return err
		}
		b.build += time.Since(start)
		b.docs += len(pending)
		pending = pending[:0]
		return nil
	}
	for _, e := range entries {
		_, events, err := st.Inspect(ctx, e.Header.ID)
		if err != nil {
			return nil, err
		}
		docs, err := sessionquery.BuildDocuments(e.Header.ID, events)
		if err != nil {
			return nil, err
		}
		pending = append(pending, docs...)
		if len(pending) >= 20000 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return b, nil
}

// query is the bare best-hit-per-session search: every match's bm25,
// grouped by session, best first.
func (b *bareIndex) query(ctx context.Context, q string) error {
	rows, err := b.db.QueryContext(ctx, `SELECT session_id, min(rank) AS best FROM docs WHERE docs MATCH ? GROUP BY session_id ORDER BY best LIMIT 20`, `"`+q+`"`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var best float64
		if err := rows.Scan(&id, &best); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (b *bareIndex) close() { b.db.Close() }
