package timeout

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func TestToolHonouringItsContextIsCutAtItsBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := startPolicy(t)
		var seen TimeoutReason
		var seenOK bool
		var deadline time.Time
		register(t, reg, "slow", 1500*time.Millisecond, func(ctx context.Context) (any, error) {
			deadline, _ = ctx.Deadline()
			<-ctx.Done()
			seen, seenOK = TimeoutOf(ctx)
			return nil, ctx.Err()
		})
		start := time.Now()
		res := run(reg, context.Background(), "slow")
		if got := time.Since(start); got != 1500*time.Millisecond {
			t.Errorf("call took %v, want exactly the 1.5s budget", got)
		}
		if !deadline.Equal(start.Add(1500 * time.Millisecond)) {
			t.Errorf("tool saw deadline %v, want start+1.5s", deadline.Sub(start))
		}
		if got, want := outcomeOf(res), timedOutAfter("1500"); got != want {
			t.Errorf("result = %+v, want %+v", got, want)
		}
		if !seenOK || seen != (TimeoutReason{Code: Code, Timeout: 1500 * time.Millisecond}) {
			t.Errorf("TimeoutOf(tool ctx) = %+v, %v", seen, seenOK)
		}
		if got := tools.PersistedError(res); got == nil || got.Name != "ToolTimeoutError" || got.Code != "TOOL_TIMEOUT" {
			t.Errorf("persisted error = %+v", got)
		}
	})
}

func TestToolIgnoringItsContextIsAwaitedAndThenReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := startPolicy(t)
		release := make(chan struct{})
		completed := false
		_, err := reg.Register(&tools.Definition{
			Name: "stubborn", Output: tools.StringOutput, Timeout: time.Second,
			Execute: func(ctx context.Context, _ *tools.Call) (any, error) {
				<-release // ignores ctx entirely
				tools.SetMutations(ctx, json.RawMessage(`[{"path":"a.txt"}]`))
				tools.DeferContext(ctx, session.Message{Role: "user"})
				completed = true
				return "finished anyway", nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan tools.Result, 1)
		go func() { done <- run(reg, context.Background(), "stubborn") }()

		time.Sleep(5 * time.Second) // far past the budget
		synctest.Wait()
		select {
		case res := <-done:
			t.Fatalf("the policy abandoned the running tool and returned %+v", outcomeOf(res))
		default:
		}
		close(release)
		res := <-done
		if !completed {
			t.Fatal("the tool body did not run to completion")
		}
		if got, want := outcomeOf(res), timedOutAfter("1000"); got != want {
			t.Errorf("result = %+v, want %+v", got, want)
		}
		if string(res.Mutations) != `[{"path":"a.txt"}]` || len(res.AdditionalContexts) != 1 {
			t.Errorf("mutations %s and %d contexts: what the tool did must stay recorded", res.Mutations, len(res.AdditionalContexts))
		}
	})
}

func TestCallerCancellationThatWinsIsAnAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := startPolicy(t)
		var cause error
		var timedOut bool
		register(t, reg, "slow", time.Second, func(ctx context.Context) (any, error) {
			<-ctx.Done()
			cause = context.Cause(ctx)
			_, timedOut = TimeoutOf(ctx)
			return nil, ctx.Err()
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan tools.Result, 1)
		go func() { done <- run(reg, ctx, "slow") }()
		time.Sleep(400 * time.Millisecond)
		cancel()
		res := <-done
		if got := outcomeOf(res); got != abortedOutcome {
			t.Errorf("result = %+v, want an ordinary abort", got)
		}
		if timedOut || !errors.Is(cause, context.Canceled) {
			t.Errorf("tool saw cause %v (timed out %v), want the caller's cancellation", cause, timedOut)
		}
	})
}

func TestDeadlineThatFiredFirstWinsOverALaterCallerCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := startPolicy(t)
		release := make(chan struct{})
		register(t, reg, "stubborn", time.Second, func(context.Context) (any, error) {
			<-release
			return "finished", nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan tools.Result, 1)
		go func() { done <- run(reg, ctx, "stubborn") }()
		time.Sleep(2 * time.Second)
		cancel()
		close(release)
		if got, want := outcomeOf(<-done), timedOutAfter("1000"); got != want {
			t.Errorf("result = %+v, want %+v", got, want)
		}
	})
}

func TestToolsWithinOrWithoutABudgetAreUntouched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := startPolicy(t)
		var hasDeadline bool
		var passed context.Context
		register(t, reg, "free", 0, func(ctx context.Context) (any, error) {
			_, hasDeadline = ctx.Deadline()
			passed = ctx
			time.Sleep(time.Hour)
			return "done", nil
		})
		register(t, reg, "quick", time.Second, waitOrDone(999*time.Millisecond))
		register(t, reg, "failing", time.Second, func(context.Context) (any, error) {
			return nil, &tools.Error{Name: "X", Code: "BROKEN", Message: "broken"}
		})

		if got := outcomeOf(run(reg, context.Background(), "free")); got != doneOutcome {
			t.Errorf("tool without budget: %+v", got)
		}
		if hasDeadline {
			t.Error("a tool without a budget got a deadline")
		}
		if _, ok := TimeoutOf(passed); ok {
			t.Error("TimeoutOf reports a timeout for an untimed tool")
		}
		if got := outcomeOf(run(reg, context.Background(), "quick")); got != doneOutcome {
			t.Errorf("tool finishing within its budget: %+v", got)
		}
		want := outcome{IsError: true, Text: "Error: broken", Message: "broken", Name: "X", Code: "BROKEN"}
		if got := outcomeOf(run(reg, context.Background(), "failing")); got != want {
			t.Errorf("tool failing within its budget: %+v, want %+v", got, want)
		}
		if got := outcomeOf(run(reg, context.Background(), "missing")); got.Code != tools.CodeUnknownTool {
			t.Errorf("unknown tool: %+v", got)
		}
	})
}

func TestPostExecuteNeverSeesTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := startPolicy(t)
		register(t, reg, "slow", time.Second, waitOrDone(time.Hour))
		register(t, reg, "quick", time.Second, waitOrDone(time.Millisecond))
		type seen struct {
			deadline bool
			err      error
		}
		var got []seen
		reg.PostExecute.Use(func(ctx context.Context, in tools.PostInput, next hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
			_, d := ctx.Deadline()
			got = append(got, seen{d, ctx.Err()})
			return next(ctx, in)
		})
		run(reg, context.Background(), "slow")
		run(reg, context.Background(), "quick")
		if len(got) != 2 || got[0] != (seen{}) || got[1] != (seen{}) {
			t.Errorf("post-execute saw %+v, want the caller's live context without a deadline", got)
		}
	})
}

func TestMiddlewareOrderDecidesWhetherTheBudgetCoversEachAttemptOrAll(t *testing.T) {
	// retry is a wrapper that runs the call twice and reports the second
	// attempt, like a naive retry policy.
	retry := func(ctx context.Context, call *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
		next(ctx, call)
		return next(ctx, call)
	}
	cases := []struct {
		name        string
		retryFirst  bool // registered before the policy, so it runs outside it
		want        outcome
		wantElapsed time.Duration
	}{
		{"retry outside the policy gives each attempt the budget", true, doneOutcome, 1200 * time.Millisecond},
		{"policy outside the retry covers both attempts", false, timedOutAfter("1000"), time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newBareHost(t)
				if tc.retryFirst {
					h.reg.Execute.Use(retry)
				}
				h.start(t)
				if !tc.retryFirst {
					h.reg.Execute.Use(retry)
				}
				register(t, h.reg, "step", time.Second, waitOrDone(600*time.Millisecond))
				start := time.Now()
				res := run(h.reg, context.Background(), "step")
				if got := outcomeOf(res); got != tc.want {
					t.Errorf("result = %+v, want %+v", got, tc.want)
				}
				if got := time.Since(start); got != tc.wantElapsed {
					t.Errorf("elapsed %v, want %v", got, tc.wantElapsed)
				}
			})
		})
	}
}

func TestNestedDeadlinesEachReportOnlyTheirOwn(t *testing.T) {
	t.Run("outer deadline with another code reads as a cancellation", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newBareHost(t)
			h.reg.Execute.Use(func(ctx context.Context, call *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
				ctx, cancel := context.WithTimeoutCause(ctx, 300*time.Millisecond, &TimeoutReason{Code: "TURN_BUDGET", Timeout: 300 * time.Millisecond})
				defer cancel()
				return next(ctx, call)
			})
			h.start(t)
			var timedOut bool
			register(t, h.reg, "slow", time.Second, func(ctx context.Context) (any, error) {
				<-ctx.Done()
				_, timedOut = TimeoutOf(ctx)
				return nil, ctx.Err()
			})
			if got := outcomeOf(run(h.reg, context.Background(), "slow")); got != abortedOutcome {
				t.Errorf("result = %+v, want an abort", got)
			}
			if timedOut {
				t.Error("TimeoutOf matched a deadline with another code")
			}
		})
	})
	t.Run("a shorter outer tool budget reports its own budget", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newBareHost(t)
			outer := Middleware(func(string) (*tools.Definition, bool) {
				return &tools.Definition{Timeout: 250 * time.Millisecond}, true
			})
			h.reg.Execute.Use(outer)
			h.start(t)
			register(t, h.reg, "slow", time.Second, waitOrDone(time.Hour))
			if got, want := outcomeOf(run(h.reg, context.Background(), "slow")), timedOutAfter("250"); got != want {
				t.Errorf("result = %+v, want %+v", got, want)
			}
		})
	})
}

func TestParallelCallsGetIndependentDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := startPolicy(t)
		register(t, reg, "fast", 2*time.Second, waitOrDone(1500*time.Millisecond))
		register(t, reg, "slow", time.Second, waitOrDone(1500*time.Millisecond))
		results := make(chan tools.Result, 2)
		for _, name := range []string{"fast", "slow"} {
			go func() { results <- run(reg, context.Background(), name) }()
		}
		got := map[outcome]int{}
		for range 2 {
			got[outcomeOf(<-results)]++
		}
		if got[doneOutcome] != 1 || got[timedOutAfter("1000")] != 1 {
			t.Errorf("outcomes = %+v, want one success and one timeout", got)
		}
	})
}
