package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/seed-e9b4dba4/dsh/internal/bench"
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
