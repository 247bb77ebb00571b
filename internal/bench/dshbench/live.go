package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/seed-e9b4dba4/dsh/internal/bench"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// liveResult is how soon a running command's output reaches the editor
// (issue 17): the built binary as `dsh acp` in a fresh home each run, a
// bash call that prints a line stamped with its own clock, then sleeps.
type liveResult struct {
	// First is the stamped line's clock reading to the first in-progress
	// tool_call_update showing it.
	First latency
}

// Issue 17's target.
const targetLiveOutput = 150 * time.Millisecond

// streamingCommand prints its clock reading, then keeps running, so the
// line can only reach the editor as live output.
const streamingCommand = `printf 'live-ns=%s\n' "$(date +%s%N)"; sleep 0.3; echo done`

func measureLive(ctx context.Context, bin string, n int) (liveResult, error) {
	var res liveResult
	args, err := json.Marshal(map[string]string{"command": streamingCommand, "description": "stream a line"})
	if err != nil {
		return res, err
	}
	var first []time.Duration
	for range n {
		llm := fakellm.New(
			fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "call_1", Name: "bash", Arguments: string(args)}}},
			fakellm.Reply{Text: "streamed"})
		s, err := bench.ACPColdStart(ctx, bench.ColdStartOptions{Bin: bin, BaseURL: llm.URL, Prompt: true, Set: []string{"permissions.mode=bypass"}})
		llm.Close()
		if err != nil {
			return res, fmt.Errorf("dsh acp with a streaming command: %w", err)
		}
		if s.LiveOutput == 0 {
			return res, fmt.Errorf("the command's first line never reached its card while it ran (result %q)", s.ToolOutput)
		}
		first = append(first, s.LiveOutput)
	}
	res.First = percentiles(first)
	return res, nil
}

func (l liveResult) rows(row func(...string)) {
	row("running command's first line → first live tool_call_update", pp(l.First), "the command's clock to the editor's read", "", "")
}

func (l liveResult) targets(row func(...string)) {
	if l.First.P50 == 0 {
		row("live output target (issue 17)", "not measured", "", "n/a", "")
		return
	}
	row("live output ≤ 150 ms after a command's first line", ms(l.First.P50), "", verdict(l.First.P50 <= targetLiveOutput), "")
}
