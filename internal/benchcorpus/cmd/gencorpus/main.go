// Command gencorpus writes a deterministic benchmark corpus of session logs.
//
//	go run ./internal/benchcorpus/cmd/gencorpus -preset large -dir /tmp/corpus
//
// The logs go to DIR/sessions, in the layout dsh itself uses, so the
// directory can serve as a DSH_HOME.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func run() error {
	preset := flag.String("preset", "small", "corpus size: small (1,000 sessions) or large (10,000)")
	dir := flag.String("dir", "", "output directory (required); logs go to DIR/sessions")
	seed := flag.Uint64("seed", 1, "corpus seed")
	sessions := flag.Int("sessions", 0, "override the preset's session count")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	opts, err := benchcorpus.Preset(*preset)
	if err != nil {
		return err
	}
	opts.Seed = *seed
	if *sessions > 0 {
		opts.Sessions = *sessions
	}
	opts.Progress = func(done, total int) {
		if done%1000 == 0 || done == total {
			fmt.Fprintf(os.Stderr, "\r%d/%d sessions", done, total)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	st := store.New(filepath.Join(*dir, "sessions"), store.Options{})
	m, err := benchcorpus.Generate(ctx, st, opts)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	fmt.Printf("sessions %d, events %d, ~%d MB, rare id %s in session %s, %s\n",
		m.Sessions, m.Events, m.Bytes>>20, benchcorpus.RareID, m.RareSession, time.Since(start).Round(time.Millisecond))
	return nil
}
