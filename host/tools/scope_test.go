package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func liveSession(t *testing.T, id string) *session.Live {
	t.Helper()
	l := session.NewLive(session.Header{Version: session.FormatVersion, ID: id}, nil, session.LiveOptions{})
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func scoped(session, name string, raw string) *tools.Definition {
	return &tools.Definition{
		Name: name, Session: session, Output: tools.StringOutput,
		RawParameters: json.RawMessage(raw),
		ValidateArgs: func(args json.RawMessage) []string {
			if !strings.Contains(string(args), `"q"`) {
				return []string{`arguments: "q" is required`}
			}
			return nil
		},
		Execute: func(context.Context, *tools.Call) (any, error) { return "ran in " + session, nil },
	}
}

func TestSessionToolsAreSeenAndCalledOnlyByTheirSession(t *testing.T) {
	reg := tools.NewRegistry(nil)
	if _, err := reg.Register(&tools.Definition{Name: "read", Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { return "global", nil }}); err != nil {
		t.Fatal(err)
	}
	schemaA := `{"type":"object","properties":{"q":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`
	removeA, err := reg.Register(scoped("A", "mcp__s__find", schemaA))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(scoped("B", "mcp__s__find", `{"type":"object"}`)); err != nil {
		t.Fatalf("two sessions may each have a tool of the same name: %v", err)
	}
	if _, err := reg.Register(scoped("A", "mcp__s__find", `{"type":"object"}`)); err == nil {
		t.Fatal("a second tool of the same name in one session was accepted")
	}
	if _, err := reg.Register(scoped("A", "read", `{"type":"object"}`)); err == nil {
		t.Fatal("a session tool shadowing a tool every session sees was accepted")
	}

	names := func(s []tools.Schema) (out []string) {
		for _, x := range s {
			out = append(out, x.Name)
		}
		return out
	}
	if got := names(reg.SchemasFor("A")); strings.Join(got, ",") != "mcp__s__find,read" {
		t.Fatalf("session A lists %v", got)
	}
	if got := names(reg.Schemas()); strings.Join(got, ",") != "read" {
		t.Fatalf("the shared listing holds session tools: %v", got)
	}
	if got := string(reg.SchemasFor("A")[0].Parameters); got != schemaA {
		t.Fatalf("raw schema changed on its way to the request: %s", got)
	}

	a, b, c := liveSession(t, "A"), liveSession(t, "B"), liveSession(t, "C")
	ctx := context.Background()
	if res := reg.Run(ctx, &tools.Call{CallID: "1", Name: "mcp__s__find", Arguments: `{"q":"x"}`, Session: b}); res.IsError || res.Value != "ran in B" {
		t.Fatalf("session B got %+v", res)
	}
	if res := reg.Run(ctx, &tools.Call{CallID: "2", Name: "mcp__s__find", Arguments: `{"q":"x"}`, Session: c}); !res.IsError || res.Error.Code != tools.CodeUnknownTool {
		t.Fatalf("session C reached another session's tool: %+v", res)
	}
	if res := reg.Run(ctx, &tools.Call{CallID: "3", Name: "mcp__s__find", Arguments: `{}`, Session: a}); !res.IsError || res.Error.Code != tools.CodeInvalidArgs {
		t.Fatalf("ValidateArgs was not applied: %+v", res)
	}
	if _, ok := reg.For(&tools.Call{Name: "mcp__s__find", Session: a}); !ok {
		t.Fatal("For does not find the session's tool")
	}
	removeA()
	if _, ok := reg.Lookup("A", "mcp__s__find"); ok {
		t.Fatal("a removed session tool is still found")
	}
	if _, ok := reg.Lookup("A", "read"); !ok {
		t.Fatal("a session does not see the tools every session sees")
	}
}

func TestRawParametersNeedAValidator(t *testing.T) {
	reg := tools.NewRegistry(nil)
	d := scoped("A", "x", `{"type":"object"}`)
	d.ValidateArgs = nil
	if _, err := reg.Register(d); err == nil {
		t.Fatal("a raw schema without ValidateArgs was accepted")
	}
}
