package spill

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// fakeStore records saves and answers with a fixed locator or error.
type fakeStore struct {
	mu    sync.Mutex
	err   error
	saves []SaveRequest
	ctxs  []context.Context
}

const fakeLocator = "/spill/session-0123456789ab/abababababab-big.txt"

func (s *fakeStore) SaveText(ctx context.Context, req SaveRequest) (Ref, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saves = append(s.saves, req)
	s.ctxs = append(s.ctxs, ctx)
	if s.err != nil {
		return Ref{}, s.err
	}
	return Ref{Locator: fakeLocator, Bytes: len(req.Content), RetrievalHint: RetrievalHint}, nil
}

// policyEnv is a registry with the policy installed and fake tools whose
// output the test sets.
type policyEnv struct {
	reg   *tools.Registry
	store *fakeStore
	logs  *bytes.Buffer
	live  *session.Live
}

const testCap = 300

func newPolicyEnv(t *testing.T, limit int) *policyEnv {
	t.Helper()
	e := &policyEnv{reg: tools.NewRegistry(nil), store: &fakeStore{}, logs: &bytes.Buffer{}}
	e.live = session.NewLive(session.Header{ID: "sess-1"}, nil, session.LiveOptions{})
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	remove := NewPolicy(e.store, limit, log).Install(e.reg)
	t.Cleanup(remove)
	return e
}

// tool registers name returning value (or failing with err).
func (e *policyEnv) tool(t *testing.T, name string, value string, err error) {
	t.Helper()
	_, rerr := e.reg.Register(&tools.Definition{
		Name: name, Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) {
			if err != nil {
				return nil, err
			}
			return value, nil
		},
	})
	if rerr != nil {
		t.Fatal(rerr)
	}
}

func (e *policyEnv) run(name string) tools.Result {
	return e.reg.Run(context.Background(), &tools.Call{CallID: "call-7", Name: name, Session: e.live})
}

func text(r tools.Result) string { return session.JoinText(r.Content) }

func TestPolicySpillsAnOversizedResult(t *testing.T) {
	e := newPolicyEnv(t, testCap)
	big := strings.Repeat("0123456789", 100)
	e.tool(t, "big", big, nil)
	res := e.run("big")
	if res.IsError || res.Value != big {
		t.Fatalf("the canonical result changed: error %v, value %.20q", res.IsError, res.Value)
	}
	got := text(res)
	// The notice for 1000 bytes at this locator is 171 bytes; the budget of
	// 300-173 = 127 keeps 64 head and 63 tail bytes, omitting 873.
	want := big[:64] + big[1000-63:] + "\n\n(Omitted 873 bytes. Full formatted result stored at: " + fakeLocator +
		". Use read with offset/limit, or grep this path to search within it.)"
	if got != want {
		t.Fatalf("content = %q\nwant      %q", got, want)
	}
	if len(res.Content) != 1 || len(got) > testCap {
		t.Errorf("%d blocks, %d bytes", len(res.Content), len(got))
	}
	wantReq := SaveRequest{SessionID: "sess-1", ToolName: "big", CallID: "call-7", Label: "result", SuggestedName: "big.txt", Content: big}
	if len(e.store.saves) != 1 || e.store.saves[0] != wantReq {
		t.Errorf("saves = %+v, want %+v", e.store.saves, wantReq)
	}
}

func TestPolicyPassesThrough(t *testing.T) {
	big := strings.Repeat("x", testCap+1)
	exact := strings.Repeat("x", testCap)
	cases := []struct {
		name  string
		setup func(t *testing.T, e *policyEnv) *tools.Call
		want  string // content expected unchanged
	}{
		{"result within the cap", func(t *testing.T, e *policyEnv) *tools.Call {
			e.tool(t, "t", exact, nil)
			return &tools.Call{Name: "t", Session: e.live}
		}, exact},
		{"read results", func(t *testing.T, e *policyEnv) *tools.Call {
			e.tool(t, "read", big, nil)
			return &tools.Call{Name: "read", Session: e.live}
		}, big},
		{"nested calls", func(t *testing.T, e *policyEnv) *tools.Call {
			e.tool(t, "t", big, nil)
			return &tools.Call{Name: "t", Session: e.live, Parent: &tools.Call{Name: "outer"}}
		}, big},
		{"non-text content", func(t *testing.T, e *policyEnv) *tools.Call {
			_, err := e.reg.Register(&tools.Definition{
				Name: "t", Output: tools.Output{Schema: tools.StringOutput.Schema, Render: func(_ *tools.Call, v any) []session.ContentBlock {
					return []session.ContentBlock{session.TextBlock(v.(string)), {Type: "image", Raw: []byte(`{}`)}}
				}},
				Execute: func(context.Context, *tools.Call) (any, error) { return big, nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			return &tools.Call{Name: "t", Session: e.live}
		}, big},
		{"blocked results", func(t *testing.T, e *policyEnv) *tools.Call {
			e.tool(t, "t", "small", nil)
			e.reg.PostExecute.Use(func(context.Context, tools.PostInput, hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
				return tools.PostDecision{Kind: tools.Block, Feedback: big}
			})
			return &tools.Call{Name: "t", Session: e.live}
		}, "Error: " + big},
		{"value replacements", func(t *testing.T, e *policyEnv) *tools.Call {
			e.tool(t, "t", "small", nil)
			e.reg.PostExecute.Use(func(context.Context, tools.PostInput, hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
				return tools.PostDecision{Kind: tools.Accept, ReplaceValue: true, Value: big}
			})
			return &tools.Call{Name: "t", Session: e.live}
		}, big},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newPolicyEnv(t, testCap)
			res := e.reg.Run(context.Background(), tc.setup(t, e))
			if got := text(res); got != tc.want {
				t.Errorf("content = %.40q… (%d bytes), want it unchanged (%d bytes)", got, len(got), len(tc.want))
			}
			if len(e.store.saves) != 0 {
				t.Errorf("the policy saved %d results", len(e.store.saves))
			}
		})
	}
}

func TestPolicyKeepsTheResultInlineWhenSpillingFails(t *testing.T) {
	big := strings.Repeat("y", 2*testCap)
	cases := []struct {
		name    string
		limit   int
		session bool
		saveErr error
		saves   int
		warning string
	}{
		{"no session", testCap, false, nil, 0, "the call has no session to own the spill file"},
		{"save failure", testCap, true, errors.New("disk full"), 1, "saving it failed"},
		{"cap too small for the notice", 100, true, nil, 1, "max_inline_bytes is too small"},
		{"zero cap", 0, true, nil, 1, "max_inline_bytes is too small"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newPolicyEnv(t, tc.limit)
			e.store.err = tc.saveErr
			e.tool(t, "t", big, nil)
			call := &tools.Call{Name: "t"}
			if tc.session {
				call.Session = e.live
			}
			res := e.reg.Run(context.Background(), call)
			if res.IsError || text(res) != big {
				t.Errorf("result changed: error %v, %d bytes", res.IsError, len(text(res)))
			}
			if len(e.store.saves) != tc.saves {
				t.Errorf("%d saves, want %d", len(e.store.saves), tc.saves)
			}
			if logs := e.logs.String(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, tc.warning) {
				t.Errorf("logs = %q, want a warning containing %q", logs, tc.warning)
			}
		})
	}
}

func TestPolicyBoundsErrorResultsAndContentFromLaterHooks(t *testing.T) {
	e := newPolicyEnv(t, testCap)
	e.tool(t, "fails", "", errors.New(strings.Repeat("e", 1000)))
	e.tool(t, "hooked", "small", nil)
	extra := session.Message{Role: "user"}
	// Registered after the policy with Use, so it runs inside it: the
	// policy sees the content and contexts this hook settled on.
	e.reg.PostExecute.Use(func(ctx context.Context, in tools.PostInput, next hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
		dec := next(ctx, in)
		if in.Call.Name == "hooked" {
			dec.Content = []session.ContentBlock{session.TextBlock(strings.Repeat("h", 600)), session.TextBlock(strings.Repeat("i", 600))}
			dec.AdditionalContexts = []session.Message{extra}
		}
		return dec
	})

	failed := e.run("fails")
	if !failed.IsError || failed.Error.Message != strings.Repeat("e", 1000) || !strings.Contains(text(failed), "(Omitted ") || len(text(failed)) > testCap {
		t.Errorf("error result: error %v, content %q", failed.IsError, text(failed))
	}
	if e.store.saves[0].Content != "Error: "+strings.Repeat("e", 1000) {
		t.Errorf("saved %.30q, want the formatted error text", e.store.saves[0].Content)
	}

	hooked := e.run("hooked")
	if got := e.store.saves[1].Content; got != strings.Repeat("h", 600)+strings.Repeat("i", 600) {
		t.Errorf("saved %d bytes, want the two hook blocks concatenated without a separator", len(got))
	}
	if !strings.HasPrefix(text(hooked), "hhh") || !strings.Contains(text(hooked), "iii\n\n(Omitted ") {
		t.Errorf("content = %q", text(hooked))
	}
	if !reflect.DeepEqual(hooked.AdditionalContexts, []session.Message{extra}) {
		t.Errorf("additional contexts = %+v, want the hook's context preserved", hooked.AdditionalContexts)
	}
}

func TestPolicySavesWithTheCallersContext(t *testing.T) {
	e := newPolicyEnv(t, testCap)
	e.tool(t, "big", strings.Repeat("z", 1000), nil)
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "caller")
	e.reg.Run(ctx, &tools.Call{Name: "big", Session: e.live})
	if len(e.store.ctxs) != 1 || e.store.ctxs[0].Value(key{}) != "caller" {
		t.Error("the store did not get the caller's context")
	}
}

func TestPolicyRunsAfterHooksRegisteredBeforeIt(t *testing.T) {
	reg := tools.NewRegistry(nil)
	reg.PostExecute.Use(func(ctx context.Context, in tools.PostInput, next hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
		dec := next(ctx, in)
		dec.Content = []session.ContentBlock{session.TextBlock(strings.Repeat("w", 1000))}
		return dec
	})
	store := &fakeStore{}
	remove := NewPolicy(store, testCap, nil).Install(reg)
	defer remove()
	if _, err := reg.Register(&tools.Definition{
		Name: "t", Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { return "small", nil },
	}); err != nil {
		t.Fatal(err)
	}
	live := session.NewLive(session.Header{ID: "s"}, nil, session.LiveOptions{})
	res := reg.Run(context.Background(), &tools.Call{Name: "t", Session: live})
	if len(store.saves) != 1 || len(text(res)) > testCap {
		t.Errorf("the policy did not bound content from an earlier-registered hook: %d saves, %d bytes", len(store.saves), len(text(res)))
	}
}
