// Command searchbench measures the session-search index on a generated
// corpus and prints one table beside its baselines: a bare one-table FTS5
// index of the same documents and, when installed, ripgrep over the JSONL
// logs. It is what `make bench` runs; it never runs in CI.
//
//	go run ./internal/bench/searchbench                  # large corpus in a temp dir
//	BENCH_CORPUS_DIR=/tmp/corpus go run ./internal/bench/searchbench -preset small
//
// With BENCH_CORPUS_DIR the corpus is generated there once and reused.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

func main() {
	if err := run(os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
}

type options struct {
	preset  string
	runs    int
	noLive  bool
	profile string
	reuse   bool
	only    string
}

func run(stdout, stderr io.Writer) error {
	var o options
	flag.StringVar(&o.preset, "preset", "large", "corpus preset: small or large")
	flag.IntVar(&o.runs, "runs", 21, "measured runs per query")
	flag.BoolVar(&o.noLive, "no-live", false, "measure without a live session in the service")
	flag.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.BoolVar(&o.reuse, "reuse-index", false, "keep an index already built in the corpus directory (skips the build measurements)")
	flag.StringVar(&o.only, "only", "", "measure only the queries whose name contains this")
	flag.Parse()
	if o.profile != "" {
		f, err := os.Create(o.profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	dir := os.Getenv("BENCH_CORPUS_DIR")
	if dir == "" {
		tmp, err := os.MkdirTemp("", "dsh-searchbench-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	st := store.New(filepath.Join(dir, "sessions"), store.Options{Log: slog.New(slog.DiscardHandler)})
	m, err := corpus(ctx, st, dir, o.preset, logf)
	if err != nil {
		return err
	}
	b, err := newBench(ctx, dir, st, m, o, logf)
	if err != nil {
		return err
	}
	defer b.close()
	rows, err := b.measure(ctx)
	if err != nil {
		return err
	}
	printTable(stdout, b, rows)
	return nil
}

// corpus reuses the corpus in dir or generates it.
func corpus(ctx context.Context, st *store.Store, dir, preset string, logf func(string, ...any)) (corpusInfo, error) {
	entries, err := st.List(ctx)
	if err != nil {
		return corpusInfo{}, err
	}
	if len(entries) > 0 {
		logf("reusing the corpus in %s (%d sessions)", dir, len(entries))
		return describe(ctx, st, entries)
	}
	opts, err := benchcorpus.Preset(preset)
	if err != nil {
		return corpusInfo{}, err
	}
	start := time.Now()
	opts.Progress = func(done, total int) {
		if done%1000 == 0 {
			logf("generating corpus: %d/%d sessions", done, total)
		}
	}
	m, err := benchcorpus.Generate(ctx, st, opts)
	if err != nil {
		return corpusInfo{}, err
	}
	logf("generated %d sessions, %d events in %s", m.Sessions, m.Events, time.Since(start).Round(time.Second))
	if entries, err = st.List(ctx); err != nil {
		return corpusInfo{}, err
	}
	return describe(ctx, st, entries)
}

// corpusInfo is what the benchmark needs to know about the corpus.
type corpusInfo struct {
	sessions int
	bytes    int64
	root     string
}

func describe(ctx context.Context, st *store.Store, entries []store.Entry) (corpusInfo, error) {
	ci := corpusInfo{sessions: len(entries), root: st.Root()}
	for _, e := range entries {
		ci.bytes += e.Size
	}
	if len(entries) == 0 {
		return ci, errors.New("the corpus is empty")
	}
	return ci, nil
}

// liveCopy attaches an in-memory copy of one persisted session under a new
// id, as an editor session would be while the benchmark searches.
func liveCopy(ctx context.Context, st *store.Store, reg *session.Registry, id string) error {
	h, events, err := st.Inspect(ctx, id)
	if err != nil {
		return err
	}
	h.ID = "live-" + h.ID
	return reg.Attach(session.NewLive(h, events, session.LiveOptions{}))
}

var _ = sessionquery.ServiceKey
