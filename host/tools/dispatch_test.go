package tools_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// register adds a string-output tool with the given body.
func register(t *testing.T, r *tools.Registry, name string, body func(ctx context.Context, call *tools.Call) (any, error)) {
	t.Helper()
	if _, err := r.Register(&tools.Definition{Name: name, Output: tools.StringOutput, Execute: body}); err != nil {
		t.Fatal(err)
	}
}

func TestCancellationAfterTheBodyStarted(t *testing.T) {
	tests := []struct {
		name    string
		body    func(cancel context.CancelFunc) func(context.Context, *tools.Call) (any, error)
		want    string
		wantErr *tools.ErrorInfo
	}{
		{
			name: "a success becomes aborted",
			body: func(cancel context.CancelFunc) func(context.Context, *tools.Call) (any, error) {
				return func(ctx context.Context, _ *tools.Call) (any, error) {
					cancel()
					<-ctx.Done()
					return "finished anyway", nil
				}
			},
			want: "Error: tool call aborted", wantErr: errInfo("tool call aborted", "AbortError", "ABORTED"),
		},
		{
			name: "a bare context error becomes aborted",
			body: func(cancel context.CancelFunc) func(context.Context, *tools.Call) (any, error) {
				return func(ctx context.Context, _ *tools.Call) (any, error) {
					cancel()
					<-ctx.Done()
					return nil, fmt.Errorf("waiting for output: %w", ctx.Err())
				}
			},
			want: "Error: tool call aborted", wantErr: errInfo("tool call aborted", "AbortError", "ABORTED"),
		},
		{
			name: "a tool failure keeps its more specific result",
			body: func(cancel context.CancelFunc) func(context.Context, *tools.Call) (any, error) {
				return func(ctx context.Context, _ *tools.Call) (any, error) {
					cancel()
					return nil, &tools.Error{Name: "BashError", Code: "BASH_FAILED", Message: "exit status 2"}
				}
			},
			want: "Error: exit status 2", wantErr: errInfo("exit status 2", "BashError", "BASH_FAILED"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := tools.NewRegistry(nil)
			register(t, r, "slow", tc.body(cancel))
			res := r.Run(ctx, call("slow", ""))
			if text(res) != tc.want || fmt.Sprint(res.Error) != fmt.Sprint(tc.wantErr) {
				t.Fatalf("got %q %+v, want %q %+v", text(res), res.Error, tc.want, tc.wantErr)
			}
		})
	}
}

func TestCancellationAfterDispatchReplacesASuccessAtFinish(t *testing.T) {
	r := tools.NewRegistry(nil)
	register(t, r, "quick", func(context.Context, *tools.Call) (any, error) { return "done", nil })
	ctx, cancel := context.WithCancel(context.Background())
	p := r.Prepare(ctx, call("quick", ""))
	r.Dispatch(ctx, p)
	cancel()
	res := r.Finish(ctx, p)
	if text(res) != "Error: tool call aborted" || res.Error.Code != tools.CodeAborted {
		t.Fatalf("got %q %+v", text(res), res.Error)
	}
}

func TestCancellationDuringApprovalAbortsBeforeDispatch(t *testing.T) {
	r := tools.NewRegistry(nil)
	ran := false
	register(t, r, "w", func(context.Context, *tools.Call) (any, error) { ran = true; return "", nil })
	ctx, cancel := context.WithCancel(context.Background())
	r.PreExecute.Use(func(context.Context, *tools.Call, hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
		return tools.PreDecision{Kind: tools.Ask}
	})
	r.SetApprover(approverFunc(func(ctx context.Context, _ *tools.Call, _ string) (string, error) {
		cancel()
		return "", ctx.Err()
	}))
	res := r.Run(ctx, call("w", ""))
	if ran || text(res) != "Error: tool call aborted before dispatch" || res.Error.Code != tools.CodeAbortedBeforeDispatch {
		t.Fatalf("ran=%v got %q %+v", ran, text(res), res.Error)
	}
}

type approverFunc func(ctx context.Context, call *tools.Call, reason string) (string, error)

func (f approverFunc) Approve(ctx context.Context, call *tools.Call, reason string) (string, error) {
	return f(ctx, call, reason)
}

type ctxKey struct{}

func TestExecuteWrapperReplacesContextAndResult(t *testing.T) {
	r := tools.NewRegistry(nil)
	register(t, r, "slow", func(ctx context.Context, _ *tools.Call) (any, error) {
		// The wrapper hands the body its deadline trigger, standing in for a
		// timer firing while the body runs.
		ctx.Value(ctxKey{}).(func())()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	timeout := errors.New("budget exhausted")
	var inner tools.Result
	r.Execute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
		bodyCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		inner = next(context.WithValue(bodyCtx, ctxKey{}, func() { cancel(timeout) }), c)
		if context.Cause(bodyCtx) == timeout {
			return tools.ErrorResult(&tools.Error{Name: "ToolTimeoutError", Code: "TOOL_TIMEOUT", Message: "tool call timed out after 1ms"})
		}
		return inner
	})
	res := r.Run(context.Background(), call("slow", ""))
	if inner.Error == nil || inner.Error.Code != tools.CodeAborted {
		t.Fatalf("base result under the wrapper's cancelled context: %+v", inner.Error)
	}
	if text(res) != "Error: tool call timed out after 1ms" || res.Error.Code != "TOOL_TIMEOUT" {
		t.Fatalf("got %q %+v", text(res), res.Error)
	}
}

func TestExecuteWrapperContextReachesTheBody(t *testing.T) {
	r := tools.NewRegistry(nil)
	register(t, r, "probe", func(ctx context.Context, _ *tools.Call) (any, error) {
		v, _ := ctx.Value(ctxKey{}).(string)
		return v, nil
	})
	r.Execute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
		return next(context.WithValue(ctx, ctxKey{}, "from wrapper"), c)
	})
	if res := r.Run(context.Background(), call("probe", "")); text(res) != "from wrapper" {
		t.Fatalf("got %q", text(res))
	}
}

func TestCallerCancellationReachesABodyUnderADetachedWrapperContext(t *testing.T) {
	r := tools.NewRegistry(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	register(t, r, "wait", func(bodyCtx context.Context, _ *tools.Call) (any, error) {
		cancel()
		<-bodyCtx.Done() // hangs forever if the caller's cancellation was lost
		return "late", nil
	})
	r.Execute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
		return next(context.WithoutCancel(ctx), c)
	})
	res := r.Run(ctx, call("wait", ""))
	if res.Error == nil || res.Error.Code != tools.CodeAborted {
		t.Fatalf("got %q %+v", text(res), res.Error)
	}
}

func TestWrapperAuthoredSuccessIsRevalidatedAndRendered(t *testing.T) {
	tests := []struct {
		name    string
		value   any
		want    string
		wantErr bool
	}{
		{"valid value is rendered", "cached", "cached", false},
		{"invalid value is rejected", 7, `Error: tool "t" returned invalid output: value: expected string, got number 7`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tools.NewRegistry(nil)
			register(t, r, "t", func(context.Context, *tools.Call) (any, error) { return "fresh", nil })
			r.Execute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
				return tools.Result{Value: tc.value, Content: []session.ContentBlock{session.TextBlock("ignored")}}
			})
			res := r.Run(context.Background(), call("t", ""))
			if text(res) != tc.want || res.IsError != tc.wantErr {
				t.Fatalf("got %q (error %v)", text(res), res.IsError)
			}
		})
	}
}

func TestWrapperAuthoredErrorGetsErrorInfo(t *testing.T) {
	r := tools.NewRegistry(nil)
	register(t, r, "t", func(context.Context, *tools.Call) (any, error) { return "fresh", nil })
	r.Execute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
		return tools.Result{IsError: true, Content: []session.ContentBlock{session.TextBlock("Error: rate limited")}}
	})
	res := r.Run(context.Background(), call("t", ""))
	if res.Error == nil || res.Error.Code != tools.CodeToolFailed || res.Error.Message != "Error: rate limited" {
		t.Fatalf("got %+v", res.Error)
	}
}

func TestAdditionalContextsAndRecordedFields(t *testing.T) {
	msg := func(s string) session.Message {
		return session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(s)}, Source: session.PluginSource("test", "")}
	}
	r := tools.NewRegistry(nil)
	register(t, r, "t", func(ctx context.Context, _ *tools.Call) (any, error) {
		tools.DeferContext(ctx, msg("from body"))
		tools.SetMeta(ctx, []byte(`{"lines":3}`))
		tools.SetMutations(ctx, []byte(`[{"path":"a.go"}]`))
		tools.ConcludeTurn(ctx)
		return "ok", nil
	})
	r.PostExecute.Use(func(ctx context.Context, in tools.PostInput, next hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
		dec := next(ctx, in)
		dec.AdditionalContexts = append(dec.AdditionalContexts, msg("from post"))
		return dec
	})
	res := r.Run(context.Background(), call("t", ""))
	var got []string
	for _, m := range res.AdditionalContexts {
		got = append(got, session.JoinText(m.Content))
	}
	if fmt.Sprint(got) != "[from body from post]" {
		t.Fatalf("contexts %q", got)
	}
	if string(res.Meta) != `{"lines":3}` || string(res.Mutations) != `[{"path":"a.go"}]` || !res.ConcludesTurn {
		t.Fatalf("meta %s mutations %s concludes %v", res.Meta, res.Mutations, res.ConcludesTurn)
	}
	if tools.DeferContext(context.Background(), msg("x")) {
		t.Fatal("DeferContext outside a tool body reported success")
	}
}

func TestBlockKeepsMutationsButOnlyTheBlockingContexts(t *testing.T) {
	r := tools.NewRegistry(nil)
	register(t, r, "t", func(ctx context.Context, _ *tools.Call) (any, error) {
		tools.DeferContext(ctx, session.Message{Role: session.RoleUser})
		tools.SetMutations(ctx, []byte(`[1]`))
		tools.ConcludeTurn(ctx)
		return "ok", nil
	})
	r.PostExecute.Use(func(context.Context, tools.PostInput, hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
		return tools.PostDecision{Kind: tools.Block}
	})
	res := r.Run(context.Background(), call("t", ""))
	if len(res.AdditionalContexts) != 0 || string(res.Mutations) != `[1]` || res.ConcludesTurn {
		t.Fatalf("contexts %d mutations %s concludes %v", len(res.AdditionalContexts), res.Mutations, res.ConcludesTurn)
	}
	if text(res) != `Error: the result of tool "t" was blocked by policy` || res.Error.Code != tools.CodeBlocked {
		t.Fatalf("got %q %+v", text(res), res.Error)
	}
}

// TestBodyReturningTheCancellationCauseIsAborted pins that a body giving up
// with context.Cause(ctx) — a custom cause that is not context.Canceled —
// reports an abort, not a tool failure carrying the cause's text.
func TestBodyReturningTheCancellationCauseIsAborted(t *testing.T) {
	cause := errors.New("cancelled by the user")
	ctx, cancel := context.WithCancelCause(context.Background())
	r := tools.NewRegistry(nil)
	register(t, r, "slow", func(ctx context.Context, _ *tools.Call) (any, error) {
		cancel(cause)
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	res := r.Run(ctx, call("slow", ""))
	if want := errInfo("tool call aborted", "AbortError", "ABORTED"); fmt.Sprint(res.Error) != fmt.Sprint(want) {
		t.Fatalf("got %q %+v", text(res), res.Error)
	}
}
