package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// tuiBenchmark is host/tui's own benchmark of opening a session: loading
// 10,000 events into the transcript model and drawing the first screen.
const tuiBenchmark = "BenchmarkOpenTenThousandEventSession"

// tuiResult is that benchmark run in the test binary, in its own process.
type tuiResult struct {
	PerOpen     time.Duration
	BytesPerOp  int64
	AllocsPerOp int64
	MaxRSS      int64
}

func measureTUI(ctx context.Context, testBin string) (tuiResult, error) {
	var res tuiResult
	m, err := runMeasured(ctx, testBin, []string{"-test.run", "^$", "-test.bench", "^" + tuiBenchmark + "$", "-test.benchtime", "10x", "-test.benchmem", "-test.count", "1"}, nil, "", os.Stderr)
	if err != nil {
		return res, fmt.Errorf("%w\n%s", err, m.stdout)
	}
	res.MaxRSS = m.maxRSS
	per, b, a, ok := parseBenchLine(m.stdout, tuiBenchmark)
	if !ok {
		return res, fmt.Errorf("no %s result in:\n%s", tuiBenchmark, m.stdout)
	}
	res.PerOpen, res.BytesPerOp, res.AllocsPerOp = per, b, a
	return res, nil
}

// parseBenchLine finds name's result line in go test -bench output and
// returns ns/op, B/op and allocs/op.
func parseBenchLine(out []byte, name string) (perOp time.Duration, bytesPerOp, allocsPerOp int64, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || (f[0] != name && !strings.HasPrefix(f[0], name+"-")) {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			var v float64
			if _, err := fmt.Sscanf(f[i], "%g", &v); err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				perOp, ok = time.Duration(v), true
			case "B/op":
				bytesPerOp = int64(v)
			case "allocs/op":
				allocsPerOp = int64(v)
			}
		}
		if ok {
			return perOp, bytesPerOp, allocsPerOp, true
		}
	}
	return 0, 0, 0, false
}
