package prompt_test

import (
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func mustAdd(t *testing.T, add func(prompt.Section) (func(), error), s prompt.Section) func() {
	t.Helper()
	remove, err := add(s)
	if err != nil {
		t.Fatal(err)
	}
	return remove
}

func TestSystemOrdersSectionsAndBreaksTiesByRegistration(t *testing.T) {
	r := prompt.NewRegistry()
	mustAdd(t, r.AddSection, prompt.Section{Name: "tool:bash", Order: 105, Text: "bash"})
	mustAdd(t, r.AddSection, prompt.Section{Name: "tool:read", Order: 100, Text: "read"})
	mustAdd(t, r.AddSection, prompt.Section{Name: "tie:first", Order: 116.5, Text: "tie 1"})
	mustAdd(t, r.AddSection, prompt.Section{Name: "identity", Order: -100, Text: "identity"})
	mustAdd(t, r.AddSection, prompt.Section{Name: "tie:second", Order: 116.5, Text: "tie 2"})
	mustAdd(t, r.AddSection, prompt.Section{Name: "tool:session-query", Order: 113, Text: "sq"})
	got, err := r.System(prompt.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "identity\n\nread\n\nbash\n\nsq\n\ntie 1\n\ntie 2"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestSystemDropsEmptySectionsAndNeverTrims(t *testing.T) {
	r := prompt.NewRegistry()
	mustAdd(t, r.AddSection, prompt.Section{Name: "harness:identity", Order: -100, Text: "You are dsh."})
	// A persona authored as a YAML block literal ends with a newline.
	mustAdd(t, r.AddSection, prompt.Section{Name: "deployment:persona", Order: 0, Text: "Work in {{cwd}} with {{model}}.\n\nBe brief.\n"})
	mustAdd(t, r.AddSection, prompt.Section{Name: "tool:subagent", Order: 116.5, Render: func(prompt.Scope) string { return "" }})
	mustAdd(t, r.AddSection, prompt.Section{Name: "tool:empty", Order: 101, Text: ""})
	mustAdd(t, r.AddSection, prompt.Section{Name: "tool:read", Order: 100, Text: "  Use read.  "})
	got, err := r.System(prompt.Scope{Cwd: "/work/p", Vars: map[string]string{"model": "deepseek-v4-flash"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "You are dsh.\n\nWork in /work/p with deepseek-v4-flash.\n\nBe brief.\n\n\n  Use read.  "
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	sections, err := r.Sections(prompt.Scope{Cwd: "/work/p", Vars: map[string]string{"model": "m"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sections {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "harness:identity,deployment:persona,tool:read" {
		t.Fatalf("sections %v", names)
	}
}

func TestRenderReceivesTheScopeAndIsInterpolated(t *testing.T) {
	r := prompt.NewRegistry()
	mustAdd(t, r.AddSection, prompt.Section{Name: "dyn", Render: func(sc prompt.Scope) string {
		return "session " + sc.SessionID + " on {{provider}}"
	}})
	got, err := r.System(prompt.Scope{SessionID: "s1", Vars: map[string]string{"provider": "deepseek"}})
	if err != nil || got != "session s1 on deepseek" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestScopeVarsOverrideCwd(t *testing.T) {
	r := prompt.NewRegistry()
	mustAdd(t, r.AddSection, prompt.Section{Name: "p", Text: "{{cwd}}"})
	got, err := r.System(prompt.Scope{Cwd: "/real", Vars: map[string]string{"cwd": "{{cwd}}"}})
	if err != nil || got != "{{cwd}}" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestRegistrationErrorsAndRemoval(t *testing.T) {
	r := prompt.NewRegistry()
	removeA := mustAdd(t, r.AddSection, prompt.Section{Name: "a", Order: 1, Text: "A"})
	mustAdd(t, r.AddSection, prompt.Section{Name: "b", Order: 2, Text: "B"})
	if _, err := r.AddSection(prompt.Section{Name: "a", Text: "again"}); err == nil || err.Error() != `prompt section "a" is already registered` {
		t.Fatalf("duplicate section: %v", err)
	}
	if _, err := r.AddSection(prompt.Section{Text: "nameless"}); err == nil {
		t.Fatal("nameless section accepted")
	}
	if _, err := r.AddSection(prompt.Section{Name: "both", Text: "x", Render: func(prompt.Scope) string { return "y" }}); err == nil {
		t.Fatal("section with Text and Render accepted")
	}
	// Sections and contexts are separate namespaces.
	mustAdd(t, r.AddContext, prompt.Section{Name: "a", Text: "context A"})
	if _, err := r.AddContext(prompt.Section{Name: "a", Text: "again"}); err == nil || err.Error() != `prompt context "a" is already registered` {
		t.Fatalf("duplicate context: %v", err)
	}

	removeA()
	removeA() // idempotent
	if got, _ := r.System(prompt.Scope{}); got != "B" {
		t.Fatalf("after remove: %q", got)
	}
	mustAdd(t, r.AddSection, prompt.Section{Name: "a", Order: 3, Text: "A2"})
	if got, _ := r.System(prompt.Scope{}); got != "B\n\nA2" {
		t.Fatalf("after re-adding: %q", got)
	}
}

func TestSystemErrorsNameTheSection(t *testing.T) {
	r := prompt.NewRegistry()
	mustAdd(t, r.AddSection, prompt.Section{Name: "deployment:persona", Text: "model {{modle}}"})
	_, err := r.System(prompt.Scope{Vars: map[string]string{"model": "m"}})
	want := `prompt section "deployment:persona": unknown prompt variable "{{modle}}"; known variables: model`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestPanickingRenderIsAnError(t *testing.T) {
	r := prompt.NewRegistry()
	mustAdd(t, r.AddContext, prompt.Section{Name: "approval:policy", Render: func(prompt.Scope) string { panic("nil mode") }})
	_, _, err := r.RuntimeContext(prompt.Scope{})
	if err == nil || err.Error() != `prompt context "approval:policy": render panicked: nil mode` {
		t.Fatalf("err = %v", err)
	}
}

func TestRuntimeContext(t *testing.T) {
	r := prompt.NewRegistry()
	if text, parts, err := r.RuntimeContext(prompt.Scope{}); text != "" || parts != nil || err != nil {
		t.Fatalf("empty registry: %q %v %v", text, parts, err)
	}
	mode := "default"
	mustAdd(t, r.AddContext, prompt.Section{Name: "approval:policy", Order: 115, Render: func(prompt.Scope) string {
		if mode == "" {
			return ""
		}
		return "Permission mode: " + mode + "."
	}})
	mustAdd(t, r.AddContext, prompt.Section{Name: "workspace", Order: 110, Text: "Workspace: {{cwd}}. Date: {{date}}."})
	sc := prompt.Scope{Cwd: "/w", Vars: map[string]string{"date": "2026-05-01"}}
	text, parts, err := r.RuntimeContext(sc)
	if err != nil {
		t.Fatal(err)
	}
	want := "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n" +
		"Workspace: /w. Date: 2026-05-01.\n\nPermission mode: default."
	if text != want {
		t.Fatalf("text %q\nwant %q", text, want)
	}
	if len(parts) != 2 || parts[0] != (prompt.Rendered{Name: "workspace", Text: "Workspace: /w. Date: 2026-05-01."}) ||
		parts[1].Name != "approval:policy" {
		t.Fatalf("parts %+v", parts)
	}
	if sys, _ := r.System(sc); sys != "" {
		t.Fatalf("contexts leaked into the system prompt: %q", sys)
	}

	msg := prompt.RuntimeContextMessage(text, parts, "m1")
	b, err := session.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"content":[{"type":"text","text":"` + strings.ReplaceAll(want, "\n", `\n`) + `"}],` +
		`"source":{"kind":"plugin","plugin":"dsh/system-prompt","form":"snapshot","sections":[` +
		`{"name":"workspace","text":"Workspace: /w. Date: 2026-05-01."},{"name":"approval:policy","text":"Permission mode: default."}]},` +
		`"role":"user","id":"m1"}`
	if string(b) != wantJSON {
		t.Fatalf("message\n got  %s\n want %s", b, wantJSON)
	}
}

func TestNoRuntimeContextMessage(t *testing.T) {
	b, err := session.Marshal(prompt.NoRuntimeContextMessage("m2"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"type":"text","text":"Current runtime context: none. Earlier runtime-context snapshots no longer apply."}],` +
		`"source":{"kind":"plugin","plugin":"dsh/system-prompt"},"role":"user","id":"m2"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}
