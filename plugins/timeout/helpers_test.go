package timeout

import (
	"context"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// startPolicy mounts the plugin on a fresh host with a tool registry and
// returns the registry. Call it inside a synctest bubble when the test needs
// fake time: the deadline timers are created per call, inside Run.
func startPolicy(t *testing.T) *tools.Registry {
	t.Helper()
	h := host.New(nil)
	reg := tools.NewRegistry(nil)
	if _, err := host.Provide(h, tools.ServiceKey, "", reg); err != nil {
		t.Fatal(err)
	}
	if err := h.Start([]host.Plugin{Plugin()}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return reg
}

func register(t *testing.T, reg *tools.Registry, name string, budget time.Duration, body func(ctx context.Context) (any, error)) {
	t.Helper()
	_, err := reg.Register(&tools.Definition{
		Name:    name,
		Output:  tools.StringOutput,
		Timeout: budget,
		Execute: func(ctx context.Context, _ *tools.Call) (any, error) { return body(ctx) },
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitOrDone is a body that succeeds after d unless its context ends first.
func waitOrDone(d time.Duration) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
			return "done", nil
		}
	}
}

func run(reg *tools.Registry, ctx context.Context, name string) tools.Result {
	return reg.Run(ctx, &tools.Call{CallID: "c1", Name: name})
}

// outcome is the part of a result these tests pin.
type outcome struct {
	IsError bool
	Text    string
	Message string
	Name    string
	Code    string
}

func outcomeOf(r tools.Result) outcome {
	o := outcome{IsError: r.IsError}
	for _, b := range r.Content {
		o.Text += b.Text
	}
	if r.Error != nil {
		o.Message, o.Name, o.Code = r.Error.Message, r.Error.Name, r.Error.Code
	}
	return o
}

func timedOutAfter(ms string) outcome {
	return outcome{
		IsError: true,
		Text:    "Error: tool call timed out after " + ms + "ms",
		Message: "tool call timed out after " + ms + "ms",
		Name:    "ToolTimeoutError",
		Code:    "TOOL_TIMEOUT",
	}
}

var abortedOutcome = outcome{
	IsError: true,
	Text:    "Error: tool call aborted",
	Message: "tool call aborted",
	Name:    tools.NameAbort,
	Code:    tools.CodeAborted,
}

var doneOutcome = outcome{Text: "done"}
