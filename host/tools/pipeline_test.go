package tools_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// fakeApprover answers every ask with a fixed outcome or error and records
// the reasons it was asked with.
type fakeApprover struct {
	outcome string
	err     error
	asked   []string
}

func (a *fakeApprover) Approve(_ context.Context, _ *tools.Call, reason string) (string, error) {
	a.asked = append(a.asked, reason)
	return a.outcome, a.err
}

type echoArgs struct {
	Text string `json:"text"`
}

// echoSchema exercises every validation rule.
func echoSchema() *tools.ObjectSchema {
	return tools.Object(
		tools.Req("text", tools.String("Text to echo.")),
		tools.Field("n", tools.Integer("A count.")),
		tools.Field("mode", tools.String("A mode.").OneOf("a", "b")),
		tools.Field("availability", tools.ArrayOf("Sources.", tools.String("").OneOf("live", "persisted"))),
		tools.Field("filter", tools.NestedObject("A filter.", tools.Req("kind", tools.String("Kind.")))),
	)
}

// env is a registry with a small roster of fake tools and counters.
type env struct {
	reg       *tools.Registry
	bodyRuns  int
	finalized int
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{reg: tools.NewRegistry(nil)}
	must := func(d *tools.Definition) {
		t.Helper()
		if _, err := e.reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	must(&tools.Definition{
		Name: "echo", Parameters: echoSchema(), Output: tools.StringOutput,
		Execute: func(ctx context.Context, call *tools.Call) (any, error) {
			e.bodyRuns++
			var a echoArgs
			if err := call.Decode(&a); err != nil {
				return nil, err
			}
			return "echo: " + a.Text, nil
		},
	})
	must(&tools.Definition{
		Name: "boom", Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { panic("kaboom") },
	})
	must(&tools.Definition{
		Name: "badout", Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { return 42, nil },
	})
	must(&tools.Definition{
		Name: "fail", Output: tools.StringOutput,
		Execute: func(_ context.Context, call *tools.Call) (any, error) {
			if strings.Contains(call.Arguments, "coded") {
				return nil, fmt.Errorf("lookup: %w", &tools.Error{Name: "SessionQueryError", Code: "SESSION_QUERY_TOOL_UNAUTHORIZED", Message: "session target is outside the caller workspace"})
			}
			return nil, errors.New("disk on fire")
		},
	})
	must(&tools.Definition{
		Name: "final", Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { return "body", nil },
		FinalizeContent: func(_ *tools.Call, res tools.Result) []session.ContentBlock {
			e.finalized++
			return []session.ContentBlock{session.TextBlock("[final] " + session.JoinText(res.Content))}
		},
	})
	return e
}

func call(name, args string) *tools.Call {
	return &tools.Call{CallID: "call-1", Name: name, Arguments: args, Args: tools.ParseArguments(args)}
}

func text(r tools.Result) string { return session.JoinText(r.Content) }

func errInfo(msg, name, code string) *tools.ErrorInfo {
	return &tools.ErrorInfo{Message: msg, Name: name, Code: code}
}

func TestRunOutcomes(t *testing.T) {
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	askWith := func(a tools.Approver) func(*env) {
		return func(e *env) {
			e.reg.PreExecute.Use(func(context.Context, *tools.Call, hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
				return tools.PreDecision{Kind: tools.Ask, Reason: "writes a file"}
			})
			if a != nil {
				e.reg.SetApprover(a)
			}
		}
	}
	post := func(dec tools.PostDecision) func(*env) {
		return func(e *env) {
			e.reg.PostExecute.Use(func(ctx context.Context, in tools.PostInput, next hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
				return dec
			})
		}
	}
	tests := []struct {
		name      string
		setup     func(*env)
		ctx       func() context.Context
		call      *tools.Call
		want      string
		wantErr   *tools.ErrorInfo
		wantBody  int
		wantFinal int
	}{
		{
			name: "success renders the value", call: call("echo", `{"text":"hi"}`),
			want: "echo: hi", wantBody: 1,
		},
		{
			name: "unknown tool", call: call("nope", `{}`),
			want:    `Error: unknown tool "nope"`,
			wantErr: errInfo(`unknown tool "nope"`, "ToolNotFoundError", "UNKNOWN_TOOL"),
		},
		{
			name: "cancelled before prepare never runs the body", ctx: cancelled, call: call("echo", `{"text":"hi"}`),
			want:    "Error: tool call aborted before dispatch",
			wantErr: errInfo("tool call aborted before dispatch", "AbortError", "ABORTED_BEFORE_DISPATCH"),
		},
		{
			name: "pre-execute deny",
			setup: func(e *env) {
				e.reg.PreExecute.Use(func(context.Context, *tools.Call, hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
					return tools.PreDecision{Kind: tools.Deny, Reason: "read-only mode forbids echo; switch modes to allow it"}
				})
			},
			call:    call("echo", `{"text":"hi"}`),
			want:    "Error: read-only mode forbids echo; switch modes to allow it",
			wantErr: errInfo("read-only mode forbids echo; switch modes to allow it", "ToolDeniedError", "DENIED"),
		},
		{
			name: "pre-execute deny without a reason", call: call("echo", `{"text":"hi"}`),
			setup: func(e *env) {
				e.reg.PreExecute.Use(func(context.Context, *tools.Call, hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
					return tools.PreDecision{Kind: tools.Deny}
				})
			},
			want:    `Error: tool "echo" was denied by policy`,
			wantErr: errInfo(`tool "echo" was denied by policy`, "ToolDeniedError", "DENIED"),
		},
		{
			name: "unknown pre-execute decision fails closed", call: call("echo", `{"text":"hi"}`),
			setup: func(e *env) {
				e.reg.PreExecute.Use(func(context.Context, *tools.Call, hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
					return tools.PreDecision{Kind: "maybe"}
				})
			},
			want:    `Error: tool "echo" was denied: pre-execute returned the unknown decision "maybe"`,
			wantErr: errInfo(`tool "echo" was denied: pre-execute returned the unknown decision "maybe"`, "ToolDeniedError", "DENIED"),
		},
		{
			name: "ask allowed once", setup: askWith(&fakeApprover{outcome: tools.AllowedOnce}),
			call: call("echo", `{"text":"hi"}`), want: "echo: hi", wantBody: 1,
		},
		{
			name: "ask allowed always", setup: askWith(&fakeApprover{outcome: tools.AllowedAlways}),
			call: call("echo", `{"text":"hi"}`), want: "echo: hi", wantBody: 1,
		},
		{
			name: "ask rejected", setup: askWith(&fakeApprover{outcome: tools.Rejected}),
			call:    call("echo", `{"text":"hi"}`),
			want:    `Error: the user rejected tool "echo"; ask the user how to proceed instead of retrying it`,
			wantErr: errInfo(`the user rejected tool "echo"; ask the user how to proceed instead of retrying it`, "ToolDeniedError", "DENIED"),
		},
		{
			name: "ask cancelled without caller cancellation is a denial", setup: askWith(&fakeApprover{outcome: tools.Cancelled}),
			call:    call("echo", `{"text":"hi"}`),
			want:    `Error: approval for tool "echo" was cancelled`,
			wantErr: errInfo(`approval for tool "echo" was cancelled`, "ToolDeniedError", "DENIED"),
		},
		{
			name: "ask unknown outcome is a denial", setup: askWith(&fakeApprover{outcome: "sure"}),
			call:    call("echo", `{"text":"hi"}`),
			want:    `Error: approval for tool "echo" returned the unknown outcome "sure"`,
			wantErr: errInfo(`approval for tool "echo" returned the unknown outcome "sure"`, "ToolDeniedError", "DENIED"),
		},
		{
			name: "ask without an approver", setup: askWith(nil),
			call:    call("echo", `{"text":"hi"}`),
			want:    `Error: tool "echo" requires approval (writes a file), but no approval channel is available in this session; tell the user, who can change the permission mode`,
			wantErr: errInfo(`tool "echo" requires approval (writes a file), but no approval channel is available in this session; tell the user, who can change the permission mode`, "ToolDeniedError", "DENIED"),
		},
		{
			name: "ask approver error", setup: askWith(&fakeApprover{err: errors.New("client went away")}),
			call:    call("echo", `{"text":"hi"}`),
			want:    `Error: approval for tool "echo" failed: client went away`,
			wantErr: errInfo(`approval for tool "echo" failed: client went away`, "ToolDeniedError", "DENIED"),
		},
		{
			name: "guard denies after allow",
			setup: func(e *env) {
				e.reg.Guard(func(context.Context, *tools.Call) string { return "" })
				e.reg.Guard(func(context.Context, *tools.Call) string { return "path is outside the workspace" })
			},
			call:    call("echo", `{"text":"hi"}`),
			want:    "Error: path is outside the workspace",
			wantErr: errInfo("path is outside the workspace", "ToolDeniedError", "DENIED"),
		},
		{
			name: "invalid JSON arguments", call: call("echo", `{"text":`),
			want:    "Error: invalid arguments: arguments: not valid JSON (unexpected EOF)",
			wantErr: errInfo("invalid arguments: arguments: not valid JSON (unexpected EOF)", "ToolArgsError", "INVALID_ARGS"),
		},
		{
			name: "invalid arguments list every violation",
			call: call("echo", `{"n":1.5,"mode":"c","availability":["archived","live"],"filter":{"kind":3,"extra":true}}`),
			want: `Error: invalid arguments: text: required; n: expected integer, got number 1.5; mode: must be one of "a", "b"; ` +
				`availability[0]: must be one of "live", "persisted"; filter.kind: expected string, got number 3; filter.extra: unknown property (allowed: kind)`,
			wantErr: errInfo(`invalid arguments: text: required; n: expected integer, got number 1.5; mode: must be one of "a", "b"; `+
				`availability[0]: must be one of "live", "persisted"; filter.kind: expected string, got number 3; filter.extra: unknown property (allowed: kind)`,
				"ToolArgsError", "INVALID_ARGS"),
		},
		{
			name: "invalid arguments are reported before pre-execute asks", setup: askWith(&fakeApprover{outcome: tools.Rejected}),
			call:    call("echo", `{}`),
			want:    "Error: invalid arguments: text: required",
			wantErr: errInfo("invalid arguments: text: required", "ToolArgsError", "INVALID_ARGS"),
		},
		{
			name: "panicking body", call: call("boom", ``),
			want:    `Error: tool "boom" panicked: kaboom`,
			wantErr: errInfo(`tool "boom" panicked: kaboom`, "PanicError", "TOOL_PANIC"),
		},
		{
			name: "uncoded error", call: call("fail", `{}`),
			want:    "Error: disk on fire",
			wantErr: errInfo("disk on fire", "Error", "TOOL_FAILED"),
		},
		{
			name: "coded error found through wrapping", call: call("fail", `{"coded":true}`),
			want:    "Error: lookup: session target is outside the caller workspace",
			wantErr: errInfo("lookup: session target is outside the caller workspace", "SessionQueryError", "SESSION_QUERY_TOOL_UNAUTHORIZED"),
		},
		{
			name: "output violating its schema", call: call("badout", `{}`),
			want:    `Error: tool "badout" returned invalid output: value: expected string, got number 42`,
			wantErr: errInfo(`tool "badout" returned invalid output: value: expected string, got number 42`, "ToolOutputError", "INVALID_TOOL_OUTPUT"),
		},
		{
			name: "post-execute accept replaces content", call: call("echo", `{"text":"hi"}`), wantBody: 1,
			setup: post(tools.PostDecision{Kind: tools.Accept, Content: []session.ContentBlock{session.TextBlock("replaced")}}),
			want:  "replaced",
		},
		{
			name: "post-execute replace value re-renders", call: call("echo", `{"text":"hi"}`), wantBody: 1,
			setup: post(tools.PostDecision{Kind: tools.Accept, ReplaceValue: true, Value: "new value"}),
			want:  "new value",
		},
		{
			name: "post-execute replacement value is revalidated", call: call("echo", `{"text":"hi"}`), wantBody: 1,
			setup:   post(tools.PostDecision{Kind: tools.Accept, ReplaceValue: true, Value: true}),
			want:    `Error: tool "echo" returned invalid output: value: expected string, got boolean true`,
			wantErr: errInfo(`tool "echo" returned invalid output: value: expected string, got boolean true`, "ToolOutputError", "INVALID_TOOL_OUTPUT"),
		},
		{
			name: "post-execute replacing value and content is rejected", call: call("echo", `{"text":"hi"}`), wantBody: 1,
			setup:   post(tools.PostDecision{Kind: tools.Accept, ReplaceValue: true, Value: "v", Content: []session.ContentBlock{}}),
			want:    `Error: post-execute for tool "echo" replaced both the value and the content; replace one`,
			wantErr: errInfo(`post-execute for tool "echo" replaced both the value and the content; replace one`, "ToolDecisionError", "INVALID_DECISION"),
		},
		{
			name: "post-execute cannot replace the value of a failure", call: call("fail", `{}`),
			setup:   post(tools.PostDecision{Kind: tools.Accept, ReplaceValue: true, Value: "v"}),
			want:    `Error: post-execute for tool "fail" replaced the value of a failed result`,
			wantErr: errInfo(`post-execute for tool "fail" replaced the value of a failed result`, "ToolDecisionError", "INVALID_DECISION"),
		},
		{
			name: "post-execute block", call: call("echo", `{"text":"hi"}`), wantBody: 1,
			setup:   post(tools.PostDecision{Kind: tools.Block, Feedback: "do not echo secrets"}),
			want:    "Error: do not echo secrets",
			wantErr: errInfo("do not echo secrets", "ToolBlockedError", "BLOCKED"),
		},
		{
			name: "post-execute sees denials too", call: call("echo", `{"text":"hi"}`),
			setup: func(e *env) {
				e.reg.Guard(func(context.Context, *tools.Call) string { return "no" })
				post(tools.PostDecision{Kind: tools.Accept, Content: []session.ContentBlock{session.TextBlock("Error: no (seen by a hook)")}})(e)
			},
			want:    "Error: no (seen by a hook)",
			wantErr: errInfo("no", "ToolDeniedError", "DENIED"),
		},
		{
			name: "panicking pre-execute hook fails the call", call: call("echo", `{"text":"hi"}`),
			setup: func(e *env) {
				e.reg.PreExecute.Use(func(context.Context, *tools.Call, hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
					panic("bad hook")
				})
			},
			want:    `Error: pre-execute hook panicked while handling tool "echo": bad hook`,
			wantErr: errInfo(`pre-execute hook panicked while handling tool "echo": bad hook`, "PanicError", "HOOK_PANIC"),
		},
		{
			name: "panicking post-execute hook fails the call", call: call("echo", `{"text":"hi"}`), wantBody: 1,
			setup: func(e *env) {
				e.reg.PostExecute.Use(func(context.Context, tools.PostInput, hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
					panic("bad post hook")
				})
			},
			want:    `Error: post-execute hook panicked while handling tool "echo": bad post hook`,
			wantErr: errInfo(`post-execute hook panicked while handling tool "echo": bad post hook`, "PanicError", "HOOK_PANIC"),
		},
		{
			name: "finalize runs once on success", call: call("final", `{}`),
			want: "[final] body", wantFinal: 1,
		},
		{
			name: "finalize runs once on a denial", call: call("final", `{}`),
			setup: func(e *env) {
				e.reg.Guard(func(context.Context, *tools.Call) string { return "denied" })
			},
			want: "[final] Error: denied", wantErr: errInfo("denied", "ToolDeniedError", "DENIED"), wantFinal: 1,
		},
		{
			name: "finalize runs once on a pre-dispatch abort", call: call("final", `{}`), ctx: cancelled,
			want:      "[final] Error: tool call aborted before dispatch",
			wantErr:   errInfo("tool call aborted before dispatch", "AbortError", "ABORTED_BEFORE_DISPATCH"),
			wantFinal: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			res := e.reg.Run(ctx, tc.call)
			if got := text(res); got != tc.want {
				t.Errorf("content = %q, want %q", got, tc.want)
			}
			if res.Content == nil {
				t.Error("content is nil")
			}
			if res.IsError != (tc.wantErr != nil) {
				t.Errorf("IsError = %v, want %v", res.IsError, tc.wantErr != nil)
			}
			if fmt.Sprint(res.Error) != fmt.Sprint(tc.wantErr) {
				t.Errorf("Error = %+v, want %+v", res.Error, tc.wantErr)
			}
			if e.bodyRuns != tc.wantBody {
				t.Errorf("echo body ran %d times, want %d", e.bodyRuns, tc.wantBody)
			}
			if e.finalized != tc.wantFinal {
				t.Errorf("finalize ran %d times, want %d", e.finalized, tc.wantFinal)
			}
		})
	}
}

func TestAskPassesTheReasonToTheApprover(t *testing.T) {
	e := newEnv(t)
	a := &fakeApprover{outcome: tools.AllowedOnce}
	e.reg.SetApprover(a)
	e.reg.PreExecute.Use(func(context.Context, *tools.Call, hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
		return tools.PreDecision{Kind: tools.Ask, Reason: "edits outside the workspace"}
	})
	e.reg.Run(context.Background(), call("echo", `{"text":"x"}`))
	if len(a.asked) != 1 || a.asked[0] != "edits outside the workspace" {
		t.Fatalf("approver asked %q", a.asked)
	}
}

func TestPersistedErrorKeepsOnlyNameAndCode(t *testing.T) {
	e := newEnv(t)
	ok := e.reg.Run(context.Background(), call("echo", `{"text":"x"}`))
	if got := tools.PersistedError(ok); got != nil {
		t.Fatalf("success: %+v", got)
	}
	failed := e.reg.Run(context.Background(), call("nope", ``))
	b, err := session.Marshal(tools.PersistedError(failed))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}` {
		t.Fatalf("persisted = %s", b)
	}
}

func TestResultObserversSeeEveryOutcomeOnceAndPanicsAreContained(t *testing.T) {
	e := newEnv(t)
	var seen []string
	e.reg.Results.Subscribe(func(c tools.Completed) { panic("observer bug") })
	e.reg.Results.Subscribe(func(c tools.Completed) { seen = append(seen, c.Call.Name+"="+text(c.Result)) })
	e.reg.Run(context.Background(), call("echo", `{"text":"a"}`))
	e.reg.Run(context.Background(), call("nope", ``))
	want := []string{"echo=echo: a", `nope=Error: unknown tool "nope"`}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("seen %q, want %q", seen, want)
	}
}

func TestRunFillsArgsFromArguments(t *testing.T) {
	e := newEnv(t)
	c := &tools.Call{CallID: "c", Name: "echo", Arguments: ` {"text": "spaced"} `}
	res := e.reg.Run(context.Background(), c)
	if text(res) != "echo: spaced" {
		t.Fatalf("got %q", text(res))
	}
	if c.Args != nil {
		t.Fatal("Run mutated the caller's call")
	}
}

func TestParseArguments(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"", "{}"},
		{"  \n\t", "{}"},
		{`{ "a" : [1, 2] }`, `{"a":[1,2]}`},
		{`{"s":"\u003cx\u003e"}`, `{"s":"\u003cx\u003e"}`},
		{`[1]`, `[1]`},
		{`{"a":`, `{"a":`},
		{`not json`, `not json`},
	}
	for _, tc := range tests {
		if got := string(tools.ParseArguments(tc.raw)); got != tc.want {
			t.Errorf("ParseArguments(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestErrorResult(t *testing.T) {
	res := tools.ErrorResult(&tools.Error{Name: "ToolTimeoutError", Code: "TOOL_TIMEOUT", Message: "tool call timed out after 50ms"})
	if !res.IsError || text(res) != "Error: tool call timed out after 50ms" ||
		fmt.Sprint(res.Error) != fmt.Sprint(errInfo("tool call timed out after 50ms", "ToolTimeoutError", "TOOL_TIMEOUT")) {
		t.Fatalf("got %+v", res)
	}
}

func TestClearedSeesOnlyCallsThatPassedTheGateBeforeTheyRun(t *testing.T) {
	e := newEnv(t)
	a := &fakeApprover{outcome: tools.AllowedOnce}
	e.reg.SetApprover(a)
	ask := false
	e.reg.PreExecute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
		if ask {
			return tools.PreDecision{Kind: tools.Ask}
		}
		return next(ctx, c)
	})
	var cleared []string
	e.reg.Cleared.Subscribe(func(c *tools.Call) { cleared = append(cleared, fmt.Sprintf("%s ran=%d", c.Arguments, e.bodyRuns)) })
	e.reg.Cleared.Subscribe(func(*tools.Call) { panic("observer bug") })
	e.reg.Run(context.Background(), call("echo", `{"text":"allowed"}`))
	ask = true
	e.reg.Run(context.Background(), call("echo", `{"text":"approved"}`))
	a.outcome = tools.Rejected
	e.reg.Run(context.Background(), call("echo", `{"text":"rejected"}`))
	e.reg.Run(context.Background(), call("echo", `{"n":"not a number"}`))
	want := []string{`{"text":"allowed"} ran=0`, `{"text":"approved"} ran=1`}
	if fmt.Sprint(cleared) != fmt.Sprint(want) {
		t.Fatalf("cleared %q, want %q", cleared, want)
	}
}
