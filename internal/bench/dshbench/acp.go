package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/bench"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// acpResult is the cold start of the built binary over ACP.
type acpResult struct {
	// Empty is a first run in an empty home: start to the initialize
	// response, and start to the first agent_message_chunk of a prompt
	// (session/new and session/prompt sent right after initialize)
	// against a local fake model server.
	EmptyInit, EmptyChunk latency
	EmptyRSS              int64
	// Corpus starts on the corpus home, whose index (opened at startup)
	// holds every session.
	CorpusInit latency
	CorpusRSS  int64
	// True is starting /bin/true to its exit: the floor of process start.
	True    latency
	TrueRSS int64
}

func measureACP(ctx context.Context, bin string, l layout, n int) (acpResult, error) {
	var res acpResult
	replies := make([]fakellm.Reply, n)
	for i := range replies {
		replies[i] = fakellm.Reply{Text: "pong from the fake model"}
	}
	llm := fakellm.New(replies...)
	defer llm.Close()
	var (
		emptyInit, emptyChunk, corpusInit, trueRuns []time.Duration
	)
	for range n {
		s, err := bench.ACPColdStart(ctx, bench.ColdStartOptions{Bin: bin, BaseURL: llm.URL, Prompt: true})
		if err != nil {
			return res, fmt.Errorf("dsh acp in an empty home: %w", err)
		}
		emptyInit, emptyChunk = append(emptyInit, s.Initialize), append(emptyChunk, s.StartToFirstChunk)
		res.EmptyRSS = max(res.EmptyRSS, s.MaxRSS)

		s, err = bench.ACPColdStart(ctx, bench.ColdStartOptions{Bin: bin, Home: l.home, BaseURL: llm.URL})
		if err != nil {
			return res, fmt.Errorf("dsh acp on the corpus: %w", err)
		}
		corpusInit = append(corpusInit, s.Initialize)
		res.CorpusRSS = max(res.CorpusRSS, s.MaxRSS)

		d, rss, err := startTrue(ctx)
		if err != nil {
			return res, err
		}
		trueRuns = append(trueRuns, d)
		res.TrueRSS = max(res.TrueRSS, rss)
	}
	res.EmptyInit, res.EmptyChunk = percentiles(emptyInit), percentiles(emptyChunk)
	res.CorpusInit, res.True = percentiles(corpusInit), percentiles(trueRuns)
	return res, nil
}

func startTrue(ctx context.Context) (time.Duration, int64, error) {
	cmd := exec.CommandContext(ctx, "true")
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("true: %w", err)
	}
	return time.Since(start), bench.MaxRSS(cmd.ProcessState), nil
}

// loadSessionEvents is the size of the session the ACP load row opens.
const loadSessionEvents = 500

// loadSessionID names that session.
const loadSessionID = "00000000-0000-4000-8000-load00000500"

// ensureLoadSession gives the corpus home a session of about
// loadSessionEvents events, of the corpus's shape, in a directory of its
// own (session/load needs a workspace that exists), once; a reused corpus
// keeps it. It returns the session's id and workspace.
func ensureLoadSession(ctx context.Context, l layout) (id, cwd string, err error) {
	dir := filepath.Join(l.dir, "load-workspace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return "", "", err
	}
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	h, events := benchcorpus.SessionIn(5, loadSessionID, dir, loadSessionEvents)
	// One grown by an older harness (whose appended-events row picked it
	// among the largest sessions of a corpus of small ones) is made again,
	// so that the row loads the session it names.
	return loadSessionID, dir, ensureSession(ctx, st, h, events)
}

// eventsOf is the number of events in session id's log.
func eventsOf(ctx context.Context, l layout, id string) (int, error) {
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	_, events, err := st.Inspect(ctx, id)
	return len(events), err
}
