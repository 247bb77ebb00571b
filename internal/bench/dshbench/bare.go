package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// bareResult is the baseline engine: one FTS5 table holding the same
// documents, with the same tokenizer and pragmas, and nothing else (no
// per-session rows, revisions, live overlay, generations or snippets).
type bareResult struct {
	// InsertSeconds counts only the SQLite inserts and commits;
	// TotalSeconds adds reading and extracting the logs.
	InsertSeconds float64     `json:"insertSeconds"`
	TotalSeconds  float64     `json:"totalSeconds"`
	Docs          int         `json:"docs"`
	Events        int64       `json:"events"`
	SizeBytes     int64       `json:"sizeBytes"`
	Queries       []bareQuery `json:"queries"`
}

type bareQuery struct {
	query
	// Sessions is the best hit per session, best first (top 20);
	// Events the top 20 hits within the best session.
	Sessions latency `json:"sessions"`
	Events   latency `json:"events"`
}

func partBare(ctx context.Context, l layout, runs int, logf func(string, ...any)) (bareResult, error) {
	var res bareResult
	if err := os.MkdirAll(filepath.Dir(l.bare), 0o755); err != nil {
		return res, err
	}
	for _, p := range []string{l.bare, l.bare + "-wal", l.bare + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return res, err
		}
	}
	db, err := sql.Open("sqlite", "file:"+l.bare+"?_pragma=journal_mode(wal)&_pragma=synchronous(normal)&_pragma=cache_size(-65536)")
	if err != nil {
		return res, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE docs USING fts5(text, session_id UNINDEXED, tokenize='unicode61 remove_diacritics 2')`); err != nil {
		return res, err
	}
	start := time.Now()
	if err := bareInsert(ctx, db, l, &res); err != nil {
		return res, err
	}
	res.TotalSeconds = time.Since(start).Seconds()
	for _, p := range []string{l.bare, l.bare + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			res.SizeBytes += fi.Size()
		}
	}
	logf("inserted %d documents of %d events in %.1f s (%.1f s with reading the logs)", res.Docs, res.Events, res.InsertSeconds, res.TotalSeconds)
	for _, q := range queries {
		bq := bareQuery{query: q}
		var best string
		if bq.Sessions, err = measure(2, runs, func() error {
			var err error
			best, err = bareSessions(ctx, db, q.Text)
			return err
		}); err != nil {
			return res, fmt.Errorf("%s: %w", q.Name, err)
		}
		if bq.Events, err = measure(2, runs, func() error { return bareEvents(ctx, db, q.Text, best) }); err != nil {
			return res, fmt.Errorf("%s events: %w", q.Name, err)
		}
		res.Queries = append(res.Queries, bq)
	}
	return res, nil
}

// bareInsert indexes every log's documents in transactions of about
// 20,000 documents.
func bareInsert(ctx context.Context, db *sql.DB, l layout, res *bareResult) error {
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	entries, err := st.List(ctx)
	if err != nil {
		return err
	}
	var pending []sessionquery.Document
	flush := func() error {
		start := time.Now()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO docs(text, session_id) VALUES (?, ?)`)
		if err != nil {
			return err
		}
		for _, d := range pending {
			if _, err := stmt.ExecContext(ctx, d.Text, d.SessionID); err != nil {
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		res.InsertSeconds += time.Since(start).Seconds()
		res.Docs += len(pending)
		pending = pending[:0]
		return nil
	}
	for _, e := range entries {
		_, events, err := st.Inspect(ctx, e.Header.ID)
		if err != nil {
			return err
		}
		res.Events += int64(len(events))
		docs, err := sessionquery.BuildDocuments(e.Header.ID, events)
		if err != nil {
			return err
		}
		pending = append(pending, docs...)
		if len(pending) >= 20000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// bareSessions is the minimal best-hit-per-session query; it returns the
// best session.
func bareSessions(ctx context.Context, db *sql.DB, q string) (string, error) {
	rows, err := db.QueryContext(ctx, `SELECT session_id, min(rank) AS best FROM docs WHERE docs MATCH ? GROUP BY session_id ORDER BY best LIMIT 20`, phrase(q))
	if err != nil {
		return "", err
	}
	defer rows.Close()
	first := ""
	for rows.Next() {
		var id string
		var score float64
		if err := rows.Scan(&id, &score); err != nil {
			return "", err
		}
		if first == "" {
			first = id
		}
	}
	return first, rows.Err()
}

// bareEvents is the minimal top-20 query within one session.
func bareEvents(ctx context.Context, db *sql.DB, q, sessionID string) error {
	rows, err := db.QueryContext(ctx, `SELECT rowid, snippet(docs, 0, '[', ']', '…', 24) FROM docs WHERE docs MATCH ? AND session_id = ? ORDER BY rank LIMIT 20`, phrase(q), sessionID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var snip string
		if err := rows.Scan(&id, &snip); err != nil {
			return err
		}
	}
	return rows.Err()
}

func phrase(q string) string { return `"` + q + `"` }
