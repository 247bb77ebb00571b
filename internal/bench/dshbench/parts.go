package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/seed-e9b4dba4/dsh/internal/bench"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// query is one benchmarked search: the five kinds issue 9 names and the
// two of issue 16, each a token whose frequency the corpus generator
// controls.
type query struct{ Name, Text string }

var queries = []query{
	{"rare id", benchcorpus.RareID},
	{"identifier", benchcorpus.MidIdentifier},
	{"common word", benchcorpus.CommonWord},
	{"phrase", benchcorpus.Phrase},
	{"CJK", benchcorpus.CJKWord},
	// Issue 16: a CJK word inside unspaced runs, and an identifier part
	// (camel, Pascal, snake, kebab and file-name forms).
	{"CJK in a run", benchcorpus.CJKInRun},
	{"identifier part", benchcorpus.IdentifierPart},
}

// latency is the p50 and p95 of a measured operation.
type latency struct {
	P50 time.Duration `json:"p50"`
	P95 time.Duration `json:"p95"`
}

func percentiles(samples []time.Duration) latency {
	p50, p95 := bench.Percentiles(samples)
	return latency{p50, p95}
}

// measure times fn: warmup unmeasured runs, then n measured ones.
func measure(warmup, n int, fn func() error) (latency, error) {
	s, err := bench.Measure(warmup, n, fn)
	if err != nil {
		return latency{}, err
	}
	return percentiles(s), nil
}

// runPart is the child: it runs one part and prints its result as JSON.
func runPart(ctx context.Context, o options, stdout, stderr io.Writer) error {
	l := layoutOf(o.dir)
	if o.profile != "" {
		f, err := os.Create(filepath.Join(o.profile, o.part+".pprof"))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "dshbench[%s]: "+format+"\n", append([]any{o.part}, args...)...)
	}
	var (
		res any
		err error
	)
	switch o.part {
	case "corpus":
		res, err = ensureCorpus(ctx, l, o.preset, logf)
	case "build":
		res, err = partBuild(ctx, l, logf)
	case "bare":
		res, err = partBare(ctx, l, o.runs, logf)
	case "search":
		res, err = partSearch(ctx, l, o.runs, logf)
	case "reconcile":
		res, err = partReconcile(ctx, l, logf)
	case "tool":
		res, err = partTool(ctx, l, o.runs, logf)
	case "big-without":
		res, err = partBigWithout(ctx, l, o.runs, logf)
	case "big-with":
		res, err = partBigWith(ctx, l, o.runs, logf)
	default:
		return fmt.Errorf("unknown part %q", o.part)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}
