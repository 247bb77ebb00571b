package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	. "github.com/seed-e9b4dba4/dsh/host/config"
)

// TestReferenceDocumentsEveryKeyOnce: every key of the tree (and
// mcp.servers) in configs/default.yaml's order, each with what the Schema
// declaring it says of it.
func TestReferenceDocumentsEveryKeyOnce(t *testing.T) {
	ref, err := Reference(compositions.ConfigSections())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := TreeOf(compositions.ConfigSections())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	byKey := map[string]KeyDoc{}
	for _, d := range ref {
		keys = append(keys, d.Key)
		byKey[d.Key] = d
		if d.Doc == "" || strings.Contains(d.Doc, "#") || (d.Env == "") != (d.Key == "mcp.servers") {
			t.Errorf("%s: doc %q, variable %q", d.Key, d.Doc, d.Env)
		}
		if !strings.HasPrefix(d.Key, d.Section) {
			t.Errorf("%s is in section %q", d.Key, d.Section)
		}
	}
	if want := append(tree.Keys(), "mcp.servers"); !slices.Equal(slices.Sorted(slices.Values(keys)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("reference keys %v\nwant %v", keys, want)
	}
	if keys[0] != "home" || keys[1] != "log.level" || keys[len(keys)-1] != "mcp.trust_read_only_hints" {
		t.Errorf("keys are not in configs/default.yaml's order: %v", keys)
	}
	cases := []struct {
		key  string
		ok   bool
		what string
	}{
		{"home", byKey["home"].Env == "DSH_HOME" && byKey["home"].Default == "" && byKey["home"].SectionDoc == "", "its variable, empty default, no section doc"},
		{"llm.api_key", byKey["llm.api_key"].Secret && !byKey["llm.api_key"].Safe, "a secret no project sets"},
		{"llm.model", byKey["llm.model"].Safe && byKey["llm.model"].Default == "deepseek-v4-flash" && byKey["llm.model"].Doc == "Model id sent to the provider.", "safe, its default and doc"},
		{"llm.retry.jitter", byKey["llm.retry.jitter"].Default == 0.1 && byKey["llm.retry.jitter"].Section == "llm", "a number in section llm"},
		{"permissions.mode", byKey["permissions.mode"].Stricter && !byKey["permissions.mode"].Safe, "only stricter"},
		{"session_query.path", byKey["session_query.path"].InHome == "session-query.db", "a file in the home"},
		{"sandbox.network", strings.HasPrefix(byKey["sandbox.network"].SectionDoc, "The sandbox of permission mode auto") && byKey["sandbox.network"].Default == false, "its section's doc"},
		{"mcp.servers", byKey["mcp.servers"].Env == "" && !byKey["mcp.servers"].Safe, "no variable, not safe"},
		{"agent.persona", strings.Count(byKey["agent.persona"].Default.(string), "\n") == 4 && strings.HasPrefix(byKey["agent.persona"].Doc, "Persona section of the system prompt; {{model}} is filled in per request. Keep per-session"), "a multi-line default, a doc joined on one line"},
	}
	for _, c := range cases {
		if !c.ok {
			t.Errorf("%s: want %s, got %+v", c.key, c.what, byKey[c.key])
		}
	}
}

func TestReferenceRefusesAKeyWithoutADefault(t *testing.T) {
	type extra struct {
		X int `mapstructure:"x"`
	}
	_, err := Reference(append(compositions.ConfigSections(), SchemaOf[extra]("plugins.extra", nil)))
	wantContains(t, err, `configs/default.yaml has no default for config key "plugins.extra.x"`)
	ref, err := Reference(nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, d := range ref {
		keys = append(keys, d.Key)
	}
	if !slices.Equal(keys, []string{"home", "mcp.servers"}) {
		t.Errorf("the reference of the loader's own keys = %v", keys)
	}
}
