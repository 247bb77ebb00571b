package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func TestValidate(t *testing.T) {
	schema := tools.Object(
		tools.Req("query", tools.String("Query.")),
		tools.Field("seq", tools.Integer("Seq.")),
		tools.Field("ratio", tools.Number("Ratio.")),
		tools.Field("all", tools.Boolean("All.")),
		tools.Field("availability", tools.ArrayOf("Sources.", tools.String("").OneOf("live", "persisted"))),
		tools.Field("ids", tools.ArrayOf("Ids.", nil)),
		tools.Field("edits", tools.ArrayOf("Edits.", tools.NestedObject("",
			tools.Req("old", tools.String("")),
			tools.Field("new", tools.String("")),
		))),
		tools.Field("where", tools.NestedObject("Where.",
			tools.Field("inner", tools.NestedObject("", tools.Req("deep", tools.Integer("")))),
		)),
	)
	tests := []struct {
		name string
		args string
		want []string
	}{
		{"minimal valid", `{"query":"x"}`, nil},
		{"empty arguments are an empty object", ``, []string{"query: required"}},
		{"unknown root keys are allowed", `{"query":"x","extra":1}`, nil},
		{"not JSON", `{"query":`, []string{"arguments: not valid JSON (unexpected EOF)"}},
		{"trailing data", `{"query":"x"} {}`, []string{"arguments: not valid JSON (unexpected data after the JSON value)"}},
		{"array root", `["query"]`, []string{"arguments: expected object, got array"}},
		{"string root", `"q"`, []string{`arguments: expected object, got string "q"`}},
		{"null root", `null`, []string{"arguments: expected object, got null"}},
		{"missing required", `{"seq":1}`, []string{"query: required"}},
		{"null required", `{"query":null}`, []string{"query: expected string, got null"}},
		{"null optional counts as absent", `{"query":"x","seq":null,"where":null}`, nil},
		{"fractional integer", `{"query":"x","seq":1.5}`, []string{"seq: expected integer, got number 1.5"}},
		{"integral float is an integer", `{"query":"x","seq":2.0}`, nil},
		{"exponent integer", `{"query":"x","seq":1e3}`, nil},
		{"2^53 passes the type check", `{"query":"x","seq":9007199254740992}`, nil},
		{"beyond int64 is still an integer", `{"query":"x","seq":123456789012345678901234567890}`, nil},
		{"negative integer", `{"query":"x","seq":-4}`, nil},
		{"string for integer", `{"query":"x","seq":"4"}`, []string{`seq: expected integer, got string "4"`}},
		{"number", `{"query":"x","ratio":0.25}`, nil},
		{"boolean for number", `{"query":"x","ratio":true}`, []string{"ratio: expected number, got boolean true"}},
		{"number for boolean", `{"query":"x","all":0}`, []string{"all: expected boolean, got number 0"}},
		{"object for string", `{"query":{}}`, []string{"query: expected string, got object"}},
		{"long string is shortened", `{"query":"x","seq":"` + strings.Repeat("é", 50) + `"}`,
			[]string{`seq: expected integer, got string "` + strings.Repeat("é", 40) + `…"`}},
		{"enum items", `{"query":"x","availability":["live","archived"]}`, []string{`availability[1]: must be one of "live", "persisted"`}},
		{"item type", `{"query":"x","availability":[1]}`, []string{`availability[0]: expected string, got number 1`}},
		{"array expected", `{"query":"x","availability":"live"}`, []string{`availability: expected array, got string "live"`}},
		{"items without a schema accept anything", `{"query":"x","ids":[1,"a",null]}`, nil},
		{"nested objects in arrays", `{"query":"x","edits":[{"old":"a"},{"new":"b","why":1}]}`,
			[]string{"edits[1].old: required", "edits[1].why: unknown property (allowed: old, new)"}},
		{"deep nesting", `{"query":"x","where":{"inner":{"deep":0.5}}}`, []string{"where.inner.deep: expected integer, got number 0.5"}},
		{"unknown nested keys in key order", `{"query":"x","where":{"z":1,"a":2}}`,
			[]string{"where.a: unknown property (allowed: inner)", "where.z: unknown property (allowed: inner)"}},
		{"violations follow declaration order", `{"seq":0.1,"query":3,"all":"y"}`,
			[]string{"query: expected string, got number 3", "seq: expected integer, got number 0.1", `all: expected boolean, got string "y"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := schema.Validate(json.RawMessage(tc.args))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("Validate(%s)\n got  %q\n want %q", tc.args, got, tc.want)
			}
		})
	}
}

func TestValidateWithoutParametersStillRequiresAnObject(t *testing.T) {
	var none *tools.ObjectSchema
	if got := none.Validate(json.RawMessage(`{"anything":1}`)); got != nil {
		t.Fatalf("got %q", got)
	}
	if got := none.Validate(json.RawMessage(`[]`)); len(got) != 1 {
		t.Fatalf("got %q", got)
	}
}

func TestRegisterRejectsBrokenDefinitions(t *testing.T) {
	body := func(context.Context, *tools.Call) (any, error) { return "", nil }
	tests := []struct {
		name string
		def  *tools.Definition
		want string
	}{
		{"nil property schema", &tools.Definition{Name: "a", Output: tools.StringOutput, Execute: body,
			Parameters: tools.Object(tools.Field("x", nil))},
			`tool "a": parameter schema: x: missing schema`},
		{"duplicate property", &tools.Definition{Name: "a", Output: tools.StringOutput, Execute: body,
			Parameters: tools.Object(tools.Field("x", tools.String("")), tools.Field("x", tools.String("")))},
			`tool "a": parameter schema: x: declared twice`},
		{"nested problem", &tools.Definition{Name: "a", Output: tools.StringOutput, Execute: body,
			Parameters: tools.Object(tools.Field("o", tools.NestedObject("", tools.Field("", tools.String("")))))},
			`tool "a": parameter schema: o: property with an empty name`},
		{"enum on an integer", &tools.Definition{Name: "a", Output: tools.StringOutput, Execute: body,
			Parameters: tools.Object(tools.Field("n", tools.Integer("").OneOf("1")))},
			`tool "a": parameter schema: n: enum is supported on strings only`},
		{"unknown type", &tools.Definition{Name: "a", Output: tools.StringOutput, Execute: body,
			Parameters: tools.Object(tools.Field("n", &tools.TypeSchema{Type: "date"}))},
			`tool "a": parameter schema: n: unsupported type "date"`},
		{"unsupported output keyword", &tools.Definition{Name: "a", Execute: body,
			Output: tools.Output{Schema: json.RawMessage(`{"type":"string","pattern":"x"}`), Render: tools.StringOutput.Render}},
			`tool "a": output schema: schema: json: unknown field "pattern"`},
		{"output required not in properties", &tools.Definition{Name: "a", Execute: body,
			Output: tools.Output{Schema: json.RawMessage(`{"type":"object","properties":{},"required":["x"]}`), Render: tools.StringOutput.Render}},
			`tool "a": output schema: schema: required names "x", which is not in properties`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tools.NewRegistry(nil).Register(tc.def)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

func TestStructuredOutputIsValidatedInItsJSONForm(t *testing.T) {
	type hit struct {
		ID    string `json:"id"`
		Score int    `json:"score"`
	}
	schema := json.RawMessage(`{"type":"object","properties":{"hits":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"score":{"type":"integer"}},"required":["id"],"additionalProperties":false}}},"required":["hits"]}`)
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"struct value", map[string]any{"hits": []hit{{"a", 1}}}, "ok"},
		{"raw JSON value", json.RawMessage(`{"hits":[],"extra":true}`), "ok"},
		{"violation", map[string]any{"hits": []any{map[string]any{"score": 1.5}}},
			`Error: tool "t" returned invalid output: value.hits[0].id: required; value.hits[0].score: expected integer, got number 1.5`},
		{"unencodable", map[string]any{"hits": make(chan int)},
			`Error: tool "t" returned invalid output: value: not encodable as JSON (json: unsupported type: chan int)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tools.NewRegistry(nil)
			_, err := r.Register(&tools.Definition{
				Name:    "t",
				Output:  tools.Output{Schema: schema, Render: func(*tools.Call, any) []session.ContentBlock { return []session.ContentBlock{session.TextBlock("ok")} }},
				Execute: func(context.Context, *tools.Call) (any, error) { return tc.value, nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(r.Run(context.Background(), call("t", ""))); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
