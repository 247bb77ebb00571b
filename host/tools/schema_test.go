package tools_test

import (
	"context"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// TestCanonicalSchemasGolden pins the request projection of a representative
// schema set: tools in lexicographic order, only name/description/parameters,
// the root without additionalProperties and without an empty required, and
// per-property key order type, description, enum|items|additionalProperties,
// properties, required. Regenerate with go test -update.
func TestCanonicalSchemasGolden(t *testing.T) {
	r := tools.NewRegistry(nil)
	defs := []*tools.Definition{
		{Name: "zeta_empty", Description: "No parameters at all."},
		{Name: "alpha_strings", Description: `Plain strings; <tags> & "quotes" — stay literal.`,
			Parameters: tools.Object(
				tools.Req("file_path", tools.String("Absolute path of the file.")),
				tools.Field("note", tools.String("")),
			)},
		{Name: "mode_enums", Description: "String enums.",
			Parameters: tools.Object(
				tools.Req("mode", tools.String("How to run.").OneOf("fast", "thorough")),
				tools.Field("count", tools.Integer("How many.")),
				tools.Field("ratio", tools.Number("A ratio.")),
				tools.Field("all", tools.Boolean("Include everything.")),
			)},
		{Name: "list_arrays", Description: "Arrays of scalars, enums and objects.",
			Parameters: tools.Object(
				tools.Field("ids", tools.ArrayOf("Ids to include.", tools.String(""))),
				tools.Field("availability", tools.ArrayOf("Sources.", tools.String("").OneOf("live", "persisted"))),
				tools.Req("todos", tools.ArrayOf("The full list.", tools.NestedObject("",
					tools.Req("content", tools.String("What to do.")),
					tools.Req("status", tools.String("").OneOf("pending", "in_progress", "completed")),
				))),
			)},
		{Name: "nest_objects", Description: "Nested objects.",
			Parameters: tools.Object(
				tools.Field("filter", tools.NestedObject("A filter.",
					tools.Field("kind", tools.String("Kind.")),
					tools.Field("range", tools.NestedObject("",
						tools.Req("from", tools.Integer("")),
						tools.Field("to", tools.Integer("")),
					)),
				)),
				tools.Field("options", tools.NestedObject("No properties.")),
			)},
	}
	for _, d := range defs {
		d.Output = tools.StringOutput
		d.Execute = func(context.Context, *tools.Call) (any, error) { return "", nil }
		if _, err := r.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	got, err := session.MarshalIndent(r.Schemas())
	if err != nil {
		t.Fatal(err)
	}
	g := goldie.New(t, goldie.WithFixtureDir("testdata"), goldie.WithNameSuffix(".golden"))
	g.Assert(t, "canonical-schemas", append(got, '\n'))
}

func TestCanonicalIsCompactAndStable(t *testing.T) {
	s := tools.Object(
		tools.Req("a", tools.ArrayOf("A.", tools.String("").OneOf("x"))),
		tools.Field("b", tools.NestedObject("", tools.Req("c", tools.String("C.")))),
	)
	want := `{"type":"object","properties":{"a":{"type":"array","description":"A.","items":{"type":"string","enum":["x"]}},` +
		`"b":{"type":"object","additionalProperties":false,"properties":{"c":{"type":"string","description":"C."}},"required":["c"]}},"required":["a"]}`
	for range 3 {
		if got := string(s.Canonical()); got != want {
			t.Fatalf("canonical\n got  %s\n want %s", got, want)
		}
	}
}
