package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// BenchmarkRun measures the pipeline's own overhead around a trivial body,
// with one middleware in each chain as a mounted policy would add.
func BenchmarkRun(b *testing.B) {
	r := tools.NewRegistry(nil)
	if _, err := r.Register(&tools.Definition{
		Name: "echo", Parameters: echoSchema(), Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { return "ok", nil },
	}); err != nil {
		b.Fatal(err)
	}
	r.PreExecute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
		return next(ctx, c)
	})
	r.Execute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
		return next(ctx, c)
	})
	r.PostExecute.Use(func(ctx context.Context, in tools.PostInput, next hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
		return next(ctx, in)
	})
	c := call("echo", `{"text":"hello","n":3,"availability":["live"],"filter":{"kind":"x"}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Run(ctx, c); res.IsError {
			b.Fatal(text(res))
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	s := echoSchema()
	args := json.RawMessage(`{"text":"hello","n":3,"mode":"a","availability":["live","persisted"],"filter":{"kind":"x"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if v := s.Validate(args); v != nil {
			b.Fatal(v)
		}
	}
}
