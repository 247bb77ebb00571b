package config_test

import (
	"bufio"
	"bytes"
	"reflect"
	"strings"
	"testing"

	. "github.com/seed-e9b4dba4/dsh/host/config"

	"github.com/seed-e9b4dba4/dsh/configs"
)

// The defaults Load reads from the generated table are the ones
// configs/default.yaml gives every key of the shipped tree.
func TestTheDefaultsLayerIsDefaultYAMLParsed(t *testing.T) {
	tree := shippedTree(t)
	built, parsed, errs := tree.DefaultLayers(configs.Default())
	if len(errs) > 0 {
		t.Fatalf("default.yaml: %v", errs)
	}
	if len(built) != len(tree.Keys()) {
		t.Errorf("the defaults layer sets %d keys; the tree has %d", len(built), len(tree.Keys()))
	}
	for key, want := range parsed {
		if got, ok := built[key]; !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the defaults layer has %#v, default.yaml %#v", key, got, want)
		}
	}
}

// TestDefaultYAMLDocumentsEveryKey pins the contract of configs/default.yaml:
// every leaf key of the Config struct is there, with a comment line above it.
func TestDefaultYAMLDocumentsEveryKey(t *testing.T) {
	tree := shippedTree(t)
	defined, err := tree.ParseDefaults(configs.Default())
	if len(err) > 0 {
		t.Fatalf("default.yaml: %v", err)
	}
	for _, key := range tree.Keys() {
		if !defined[key] {
			t.Errorf("default.yaml does not define %q", key)
		}
	}

	var path []string // section stack by indent level
	var prev string
	sc := bufio.NewScanner(bytes.NewReader(configs.Default()))
	inBlock := -1 // indent of a block literal being skipped
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		indent := (len(line) - len(strings.TrimLeft(line, " "))) / 2
		if inBlock >= 0 {
			if trimmed == "" || indent > inBlock {
				continue
			}
			inBlock = -1
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			if trimmed != "" {
				prev = trimmed
			}
			continue
		}
		name, value, _ := strings.Cut(trimmed, ":")
		path = append(path[:min(indent, len(path))], name)
		key := strings.Join(path, ".")
		value = strings.TrimSpace(value)
		if value == "|" {
			inBlock = indent
		}
		if leaf, _ := tree.IsLeaf(key); leaf && !strings.HasPrefix(prev, "#") {
			t.Errorf("default.yaml: key %q has no comment line above it", key)
		}
		prev = trimmed
	}
}

func TestRuleTablesNameRealKeys(t *testing.T) {
	tree := shippedTree(t)
	for _, key := range tree.RuleKeys() {
		if leaf, _ := tree.IsLeaf(key); !leaf {
			t.Errorf("rule for unknown key %q", key)
		}
	}
	for _, key := range tree.Paths() {
		if _, str := tree.IsLeaf(key); !str {
			t.Errorf("path key %q is not a string key", key)
		}
	}
	for _, p := range tree.Pairs() {
		lo, hi := tree.LeafKind(p.Low), tree.LeafKind(p.High)
		if lo == "" || lo != hi {
			t.Errorf("pair %s/%s does not name two keys of one type", p.Low, p.High)
		}
	}
}

func TestSuggestFindsPlausibleTypos(t *testing.T) {
	tests := map[string]string{
		"llm.modle":             "llm.model",
		"LLM.MODEL":             "llm.model",
		"permisions.mode":       "permissions.mode",
		"session_query.opne_at": "session_query.open_at",
		"tool":                  "tools",
		"completely.different":  "",
		"x":                     "",
	}
	for in, want := range tests {
		if got := shippedTree(t).Suggest(in); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"model", "model", 0},
		{"modle", "model", 1},
		{"mode", "model", 1},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
	}
	for _, tt := range tests {
		if got := EditDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
