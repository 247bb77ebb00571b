package codingtools

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// TestToolSchemasAreCanonical pins what the model receives for each tool:
// name, description and the canonical parameter schema, byte for byte
// (indented only for review). Update with go test -update.
func TestToolSchemasAreCanonical(t *testing.T) {
	s, err := New(DefaultConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := goldie.New(t, goldie.WithFixtureDir("testdata/schemas"), goldie.WithNameSuffix(".golden"))
	for _, d := range s.Definitions() {
		raw, err := session.Marshal(tools.SchemaOf(d))
		if err != nil {
			t.Fatal(err)
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		g.Assert(t, d.Name, pretty.Bytes())
	}
}

func TestDefinitionsAreOrderedAndRegistrable(t *testing.T) {
	s := testSet(t, nil)
	reg := tools.NewRegistry(nil)
	var names []string
	for _, d := range s.Definitions() {
		if _, err := reg.Register(d); err != nil {
			t.Fatalf("register %s: %v", d.Name, err)
		}
		names = append(names, d.Name)
	}
	want := []string{"bash", "edit", "glob", "grep", "read", "todo_write", "write"}
	if len(names) != len(want) {
		t.Fatalf("names = %v", names)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("names = %v, want %v", names, want)
		}
	}
	effects := map[string]tools.Effect{
		"bash": tools.EffectExecute, "edit": tools.EffectWrite, "write": tools.EffectWrite,
		"glob": tools.EffectRead, "grep": tools.EffectRead, "read": tools.EffectRead, "todo_write": tools.EffectState,
	}
	for _, d := range s.Definitions() {
		if d.Effect != effects[d.Name] {
			t.Errorf("%s effect = %v, want %v", d.Name, d.Effect, effects[d.Name])
		}
		if d.PresentCall == nil {
			t.Errorf("%s has no PresentCall", d.Name)
		}
	}
}
