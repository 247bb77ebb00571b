package searchindex

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// benchCorpus is generated once per benchmark binary run: 300 sessions,
// about 60,000 events. BENCH_CORPUS_DIR points the benchmarks at a larger
// corpus instead (for example one made by cmd/gencorpus).
var benchCorpus = sync.OnceValues(func() (string, error) {
	if dir := os.Getenv("BENCH_CORPUS_DIR"); dir != "" {
		return filepath.Join(dir, "sessions"), nil
	}
	dir, err := os.MkdirTemp("", "searchindex-bench-*")
	if err != nil {
		return "", err
	}
	root := filepath.Join(dir, "sessions")
	opts := benchcorpus.Small
	opts.Sessions = 300
	_, err = benchcorpus.Generate(context.Background(), store.New(root, store.Options{}), opts)
	return root, err
})

type benchEnv struct {
	st  *store.Store
	svc *sessionquery.Service
	reg *session.Registry
	ix  *Index
}

func newBenchEnv(b *testing.B) benchEnv {
	b.Helper()
	root, err := benchCorpus()
	if err != nil {
		b.Fatal(err)
	}
	st := store.New(root, store.Options{})
	reg := session.NewRegistry()
	svc, err := sessionquery.New(sessionquery.DefaultConfig(), reg)
	if err != nil {
		b.Fatal(err)
	}
	svc.Mount(sessionquery.NewStorePersistence(st))
	ix, err := New(DefaultConfig(filepath.Join(b.TempDir(), "index.db")), svc, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ix.Close() })
	return benchEnv{st: st, svc: svc, reg: reg, ix: ix}
}

func BenchmarkBuild(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	if err := env.ix.Open(ctx); err != nil {
		b.Fatal(err)
	}
	var events int64
	for b.Loop() {
		if err := env.ix.Rebuild(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	st, err := env.ix.Status(ctx)
	if err != nil {
		b.Fatal(err)
	}
	events = st.Events
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkSearchSessions(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	if err := env.ix.Sync(ctx); err != nil {
		b.Fatal(err)
	}

	for _, q := range []struct{ name, text string }{
		{"rare-id", benchcorpus.RareID},
		{"identifier", benchcorpus.MidIdentifier},
		{"common-word", benchcorpus.CommonWord},
		{"phrase", benchcorpus.Phrase},
		{"cjk", benchcorpus.CJKWord},
	} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := env.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: q.text}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSyncWithoutChanges(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	if err := env.ix.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := env.ix.Sync(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareInsert inserts the same documents BenchmarkBuild indexes
// into a minimal one-table FTS5 index: the baseline of the build target.
func BenchmarkBareInsert(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	entries, err := env.st.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var docs []sessionquery.Document
	events := 0
	for _, e := range entries {
		_, log, err := env.st.Inspect(ctx, e.Header.ID)
		if err != nil {
			b.Fatal(err)
		}
		d, err := sessionquery.BuildDocuments(e.Header.ID, log)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, d...)
		events += len(log)
	}
	for b.Loop() {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "bare.db")+"?_pragma=journal_mode(wal)&_pragma=synchronous(normal)")
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		if _, err := db.Exec(`CREATE VIRTUAL TABLE docs USING fts5(text, session_id UNINDEXED, tokenize='unicode61 remove_diacritics 2')`); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(docs); i += batchDocs {
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			st, err := tx.Prepare(`INSERT INTO docs(text, session_id) VALUES (?, ?)`)
			if err != nil {
				b.Fatal(err)
			}
			for _, d := range docs[i:min(len(docs), i+batchDocs)] {
				if _, err := st.Exec(d.Text, d.SessionID); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		db.Close()
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkSearchEvents(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	for _, q := range []struct{ name, text string }{
		{"rare-id", benchcorpus.RareID},
		{"common-word", benchcorpus.CommonWord},
		{"phrase", benchcorpus.Phrase},
	} {
		p, err := env.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: q.text})
		if err != nil || len(p.Items) == 0 {
			b.Fatalf("%s: %v (%d hits)", q.name, err, len(p.Items))
		}
		target := p.Items[0].Header.ID
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := env.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: target, Query: q.text}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSyncAfterAppend measures catching up with one session that
// grew by a few events, as after each step of a running agent elsewhere.
func BenchmarkSyncAfterAppend(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	if err := env.ix.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	entries, err := env.st.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	id := entries[len(entries)/2].Header.ID
	w, _, events, err := env.st.Open(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	next := len(events)
	for b.Loop() {
		b.StopTimer()
		e := session.Event{Type: session.TypeTodoWrite, Seq: next, Time: int64(next), Data: session.MustMarshal(session.TodoWrite{Todos: []session.Todo{{Content: "benchmark", Status: "pending"}}})}
		next++
		if err := w.Append(e); err != nil {
			b.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := env.ix.Sync(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchLargeEvent searches a session holding one 5 MB event, with
// the query's first match at the start of its indexed text and near the
// end of it (the most windows firstMatch probes).
func BenchmarkSearchLargeEvent(b *testing.B) {
	for _, c := range []struct {
		name string
		text string
	}{
		{"match-everywhere", strings.Repeat(filler(1000)+" needle ", 5<<20/1008)},
		{"match-at-cap", filler(maxDocBytes-2000) + " needle " + filler(5<<20)},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			st := store.New(filepath.Join(dir, "sessions"), store.Options{})
			w, err := st.Create(session.Header{ID: "big", CreatedAt: 1}, []session.Event{
				{Type: session.TypeUserMessage, Seq: 0, Time: 1, SurfaceOp: session.OpAppend, Data: session.MustMarshal(userMsg(c.text))},
			})
			if err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			svc, err := sessionquery.New(sessionquery.DefaultConfig(), session.NewRegistry())
			if err != nil {
				b.Fatal(err)
			}
			svc.Mount(sessionquery.NewStorePersistence(st))
			ix, err := New(DefaultConfig(filepath.Join(dir, "index.db")), svc, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			ctx := context.Background()
			if err := ix.Sync(ctx); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				p, err := ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle"})
				if err != nil || len(p.Items) != 1 {
					b.Fatalf("%v (%d hits)", err, len(p.Items))
				}
			}
		})
	}
}
