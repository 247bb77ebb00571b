package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
)

// update rewrites what the tests of this package generate (the README's
// configuration reference), the flag goldie gives other packages.
var update = flag.Bool("update", false, "rewrite the configuration reference in README.md")

const (
	readmePath = "../../README.md"
	// The markers around the generated configuration reference.
	referenceBegin = "<!-- BEGIN configuration reference: generated from the key tree by `go test ./cmd/dsh -run TestReadmeConfigurationReferenceIsTheKeyTree -update`; do not edit -->\n"
	referenceEnd   = "<!-- END configuration reference -->\n"
)

func configReference(t *testing.T) []config.KeyDoc {
	t.Helper()
	ref, err := config.Reference(compositions.ConfigSections())
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestReadmeConfigurationReferenceIsTheKeyTree checks the README's table of
// every config key against the one key tree: the keys the Schemas declare,
// their defaults and docs in configs/default.yaml, whether an untrusted
// project may set them and which are secrets. -update rewrites it.
func TestReadmeConfigurationReferenceIsTheKeyTree(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(data), referenceBegin)
	got, after, ok2 := strings.Cut(rest, referenceEnd)
	if !ok || !ok2 {
		t.Fatalf("README.md lacks the markers of the configuration reference:\n%s%s", referenceBegin, referenceEnd)
	}
	if _, section, _ := strings.Cut(before, "\n## Configuration\n"); section == "" || strings.Contains(section, "\n## ") {
		t.Fatal("the configuration reference is not in README.md's Configuration section")
	}
	want := renderReference(configReference(t))
	if *update {
		if err := os.WriteFile(readmePath, []byte(before+referenceBegin+want+referenceEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("README.md's configuration reference is not the key tree's (%s); regenerate it: go test ./cmd/dsh -run TestReadmeConfigurationReferenceIsTheKeyTree -update", firstDifference(got, want))
	}
}

// TestConfigShowAgreesWithTheReference checks dsh config show against the
// reference: the same keys (but mcp.servers, which dsh mcp list shows), each
// from the defaults when nothing else sets it and with the default the
// README lists, but for the paths Load derives from the home.
func TestConfigShowAgreesWithTheReference(t *testing.T) {
	s := newSandbox(t)
	shown := map[string]shownSetting{}
	for _, st := range s.showJSON().Settings {
		shown[st.Key] = shownSetting{Key: st.Key, Value: st.Value, Origin: st.Origin}
	}
	ref := configReference(t)
	if len(shown) != len(ref)-1 {
		t.Errorf("config show lists %d keys, the reference %d and mcp.servers", len(shown), len(ref)-1)
	}
	for _, d := range ref {
		st, ok := shown[d.Key]
		if !ok {
			if d.Key != "mcp.servers" {
				t.Errorf("config show does not list %s", d.Key)
			}
			continue
		}
		want, origin := tableValue(throughJSON(t, d.Default)), "default"
		switch {
		case d.Key == "home":
			want, origin = tableValue(s.home), "env DSH_HOME"
		case d.InHome != "":
			want = tableValue(filepath.Join(s.home, d.InHome))
		}
		if got := tableValue(st.Value); got != want || st.Origin != origin {
			t.Errorf("config show %s = %s (%s), want %s (%s)", d.Key, got, st.Origin, want, origin)
		}
	}
}

// throughJSON is v as config show --json prints it, decoded like its output.
func throughJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// renderReference is the README's table of every key, one per section of
// configs/default.yaml.
func renderReference(ref []config.KeyDoc) string {
	var b strings.Builder
	for i, d := range ref {
		if i == 0 || ref[i-1].Section != d.Section {
			fmt.Fprintf(&b, "#### `%s`\n\n", d.Section)
			if d.SectionDoc != "" {
				b.WriteString(markdownText(d.SectionDoc) + "\n\n")
			}
			b.WriteString("| key | default | variable | untrusted project | description |\n|---|---|---|---|---|\n")
		}
		project := "ignored"
		switch {
		case d.Safe:
			project = "set"
		case d.Stricter:
			project = "stricter only"
		}
		variable := "—"
		if d.Env != "" {
			variable = "`" + d.Env + "`"
		}
		doc := markdownText(d.Doc)
		if d.Secret {
			doc += " Secret: `dsh config show` masks it."
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.Key, codeCell(defaultText(d.Default)), variable, project, doc)
		if i == len(ref)-1 || ref[i+1].Section != d.Section {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// defaultText is a default as config show's table prints it; a map (the
// servers of mcp.servers) as JSON.
func defaultText(v any) string {
	if m, ok := v.(map[string]any); ok {
		out, _ := json.Marshal(m)
		return string(out)
	}
	return tableValue(v)
}

// codeCell is s as code in a table cell.
func codeCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// markdownText escapes a doc comment for a Markdown table cell: the
// characters Markdown would take for a table border, an HTML tag or
// emphasis. An underscore between two letters or digits (DSH_HOME) stays as
// it is, since it cannot emphasize.
func markdownText(s string) string {
	r := []rune(s)
	alnum := func(i int) bool {
		return i >= 0 && i < len(r) && (unicode.IsLetter(r[i]) || unicode.IsDigit(r[i]))
	}
	var b strings.Builder
	for i, c := range r {
		switch {
		case strings.ContainsRune("|<>*`\\", c):
			b.WriteRune('\\')
		case c == '_':
			// A run of underscores stays when letters or digits enclose it.
			start, end := i, i
			for start > 0 && r[start-1] == '_' {
				start--
			}
			for end+1 < len(r) && r[end+1] == '_' {
				end++
			}
			if !alnum(start-1) || !alnum(end+1) {
				b.WriteRune('\\')
			}
		}
		b.WriteRune(c)
	}
	return b.String()
}

// firstDifference names the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d of the reference is\n%s\nwant\n%s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("it has %d lines, want %d", len(g), len(w))
}

func TestMarkdownTextEscapesWhatMarkdownWouldRender(t *testing.T) {
	for in, want := range map[string]string{
		"debug | info":             `debug \| info`,
		"empty = <home>/sessions":  `empty = \<home\>/sessions`,
		"AWS_* or *_TOKEN":         `AWS\_\* or \*\_TOKEN`,
		"DSH_LLM_API_KEY, a_b":     "DSH_LLM_API_KEY, a_b",
		"as mcp__<server>__<tool>": `as mcp\_\_\<server\>\_\_\<tool\>`,
		"`x` and \\":               "\\`x\\` and \\\\",
		"_lead and trail_":         `\_lead and trail\_`,
	} {
		if got := markdownText(in); got != want {
			t.Errorf("markdownText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := codeCell(`a|b`); got != "`a\\|b`" {
		t.Errorf("codeCell = %q", got)
	}
}
