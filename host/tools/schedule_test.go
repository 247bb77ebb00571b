package tools_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func TestExecutionMode(t *testing.T) {
	r := tools.NewRegistry(nil)
	classifierRuns := 0
	add := func(name string, classify func(*tools.Call) bool) {
		t.Helper()
		_, err := r.Register(&tools.Definition{
			Name: name, Output: tools.StringOutput,
			Parameters:      tools.Object(tools.Field("path", tools.String("A path."))),
			Execute:         func(context.Context, *tools.Call) (any, error) { return "", nil },
			ConcurrencySafe: classify,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	add("read", func(*tools.Call) bool { classifierRuns++; return true })
	add("write", nil)
	add("maybe", func(*tools.Call) bool { return false })
	add("panics", func(*tools.Call) bool { panic("classifier bug") })
	add("bypath", func(c *tools.Call) bool {
		var a struct{ Path string }
		_ = c.Decode(&a)
		return a.Path != "/etc/passwd"
	})
	tests := []struct {
		name, tool, args string
		want             tools.Mode
	}{
		{"exact true is parallel", "read", `{"path":"a"}`, tools.Parallel},
		{"empty arguments are valid", "read", ``, tools.Parallel},
		{"no classifier is exclusive", "write", `{"path":"a"}`, tools.Exclusive},
		{"false is exclusive", "maybe", `{}`, tools.Exclusive},
		{"panicking classifier is exclusive", "panics", `{}`, tools.Exclusive},
		{"unknown tool is exclusive", "nope", `{}`, tools.Exclusive},
		{"invalid arguments are exclusive", "read", `{"path":3}`, tools.Exclusive},
		{"invalid JSON is exclusive", "read", `{"path"`, tools.Exclusive},
		{"classification depends on arguments", "bypath", `{"path":"/etc/passwd"}`, tools.Exclusive},
		{"classification depends on arguments too", "bypath", `{"path":"b"}`, tools.Parallel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &tools.Call{Name: tc.tool, Arguments: tc.args}
			if got := r.ExecutionMode(c); got != tc.want {
				t.Fatalf("ExecutionMode = %v, want %v", got, tc.want)
			}
		})
	}
	if classifierRuns != 2 {
		t.Fatalf("classifier ran %d times; it must not run for invalid arguments", classifierRuns)
	}
}

// TestDispatchOverlapsWhilePreAndPostStayOrdered drives two calls the way the
// agent loop does: Prepare in order, Dispatch concurrently, Finish in order.
// Each body waits until the other has started, so the test only completes if
// dispatches really overlap.
func TestDispatchOverlapsWhilePreAndPostStayOrdered(t *testing.T) {
	r := tools.NewRegistry(nil)
	started := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	other := map[string]string{"a": "b", "b": "a"}
	register(t, r, "read", func(ctx context.Context, c *tools.Call) (any, error) {
		var args struct{ ID string }
		if err := c.Decode(&args); err != nil {
			return nil, err
		}
		close(started[args.ID])
		select {
		case <-started[other[args.ID]]:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return "read " + args.ID, nil
	})
	var mu sync.Mutex
	var order []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	r.PreExecute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
		record("pre " + c.CallID)
		return next(ctx, c)
	})
	r.PostExecute.Use(func(ctx context.Context, in tools.PostInput, next hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
		record("post " + in.Call.CallID)
		return next(ctx, in)
	})
	ctx := context.Background()
	var prepared []*tools.Prepared
	for _, id := range []string{"a", "b"} {
		p := r.Prepare(ctx, &tools.Call{CallID: id, Name: "read", Arguments: fmt.Sprintf(`{"id":%q}`, id)})
		if !p.Ready() {
			t.Fatalf("call %s not ready", id)
		}
		prepared = append(prepared, p)
	}
	var wg sync.WaitGroup
	for _, p := range prepared {
		wg.Go(func() { r.Dispatch(ctx, p) })
	}
	wg.Wait()
	var results []string
	for _, p := range prepared {
		results = append(results, text(r.Finish(ctx, p)))
	}
	if fmt.Sprint(results) != "[read a read b]" {
		t.Fatalf("results %q", results)
	}
	if fmt.Sprint(order) != "[pre a pre b post a post b]" {
		t.Fatalf("hook order %q", order)
	}
}

func TestPreparedLifecycle(t *testing.T) {
	r := tools.NewRegistry(nil)
	runs := 0
	register(t, r, "t", func(context.Context, *tools.Call) (any, error) { runs++; return "ok", nil })
	emitted := 0
	r.Results.Subscribe(func(tools.Completed) { emitted++ })
	ctx := context.Background()

	t.Run("an outcome at prepare is not ready and dispatch is a no-op", func(t *testing.T) {
		p := r.Prepare(ctx, call("nope", ""))
		if p.Ready() {
			t.Fatal("unknown tool is ready")
		}
		r.Dispatch(ctx, p)
		if res := r.Finish(ctx, p); res.Error.Code != tools.CodeUnknownTool {
			t.Fatalf("got %+v", res.Error)
		}
	})
	t.Run("a ready call finished without dispatch is aborted before dispatch", func(t *testing.T) {
		p := r.Prepare(ctx, call("t", ""))
		if !p.Ready() {
			t.Fatal("not ready")
		}
		res := r.Finish(ctx, p)
		if res.Error == nil || res.Error.Code != tools.CodeAbortedBeforeDispatch || runs != 0 {
			t.Fatalf("got %+v, body runs %d", res.Error, runs)
		}
	})
	t.Run("finish is idempotent and emits once", func(t *testing.T) {
		before := emitted
		p := r.Prepare(ctx, call("t", ""))
		r.Dispatch(ctx, p)
		r.Dispatch(ctx, p)
		first, second := r.Finish(ctx, p), r.Finish(ctx, p)
		if text(first) != "ok" || text(second) != "ok" || runs != 1 || emitted != before+1 {
			t.Fatalf("first %q second %q runs %d emitted %d", text(first), text(second), runs, emitted-before)
		}
	})
	t.Run("prepare exposes the call with parsed arguments", func(t *testing.T) {
		p := r.Prepare(ctx, &tools.Call{Name: "t", Arguments: ""})
		if string(p.Call().Args) != "{}" {
			t.Fatalf("args %q", p.Call().Args)
		}
	})
}

func TestChainsRunPrependedMiddlewaresFirst(t *testing.T) {
	r := tools.NewRegistry(nil)
	register(t, r, "t", func(context.Context, *tools.Call) (any, error) { return "ok", nil })
	var order []string
	for _, name := range []string{"use1", "use2"} {
		r.PreExecute.Use(preRecorder(&order, "pre:"+name))
		r.Execute.Use(execRecorder(&order, "exec:"+name))
		r.PostExecute.Use(postRecorder(&order, "post:"+name))
	}
	for _, name := range []string{"prepend1", "prepend2"} {
		r.PreExecute.Prepend(preRecorder(&order, "pre:"+name))
		r.Execute.Prepend(execRecorder(&order, "exec:"+name))
		r.PostExecute.Prepend(postRecorder(&order, "post:"+name))
	}
	r.Run(context.Background(), call("t", ""))
	want := "[pre:prepend2 pre:prepend1 pre:use1 pre:use2 " +
		"exec:prepend2 exec:prepend1 exec:use1 exec:use2 " +
		"post:prepend2 post:prepend1 post:use1 post:use2]"
	if fmt.Sprint(order) != want {
		t.Fatalf("order %v\nwant  %s", order, want)
	}
}

func preRecorder(order *[]string, name string) hook.Middleware[*tools.Call, tools.PreDecision] {
	return func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
		*order = append(*order, name)
		return next(ctx, c)
	}
}

func execRecorder(order *[]string, name string) hook.Middleware[*tools.Call, tools.Result] {
	return func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
		*order = append(*order, name)
		return next(ctx, c)
	}
}

func postRecorder(order *[]string, name string) hook.Middleware[tools.PostInput, tools.PostDecision] {
	return func(ctx context.Context, in tools.PostInput, next hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
		*order = append(*order, name)
		return next(ctx, in)
	}
}
