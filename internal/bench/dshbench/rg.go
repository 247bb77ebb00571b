package main

import (
	"context"
	"errors"
	"os/exec"
)

// rgResult is ripgrep over the JSONL logs, the tool a user would reach for
// without an index.
type rgResult struct {
	// Missing says rg is not installed; nothing was measured.
	Missing bool
	Queries map[string]latency
}

// measureRG runs rg -c -F (count matching lines per file, fixed string)
// for every query over the sessions directory.
func measureRG(ctx context.Context, root string, runs int) (rgResult, error) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		return rgResult{Missing: true}, nil
	}
	res := rgResult{Queries: map[string]latency{}}
	for _, q := range queries {
		lat, err := measure(1, min(runs, 7), func() error {
			err := exec.CommandContext(ctx, rg, "-c", "-F", "--no-messages", q.Text, root).Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 1 {
				return nil // no match
			}
			return err
		})
		if err != nil {
			return res, err
		}
		res.Queries[q.Name] = lat
	}
	return res, nil
}
