package sessionquery

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

var toolOrder = []string{ToolSessionSearch, ToolEventSearch, ToolSessionTrace, ToolEventTrace, ToolEventRead}

// noSection is a config source that sets nothing, so the plugin keeps the
// built-in defaults.
type noSection struct{}

func (noSection) Decode(any) error { return nil }

type sources map[string]host.Section

func (m sources) Section(path string) host.Section { return m[path] }

// startHost mounts the plugin on a host providing the given services.
func startHost(t *testing.T, sec host.Section, provide ...string) (*host.Host, *tools.Registry, *prompt.Registry, error) {
	t.Helper()
	h := host.New(slog.New(slog.DiscardHandler))
	reg, prompts := tools.NewRegistry(nil), prompt.NewRegistry()
	svc, err := sq.New(sq.DefaultConfig(), session.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range provide {
		switch name {
		case "tools":
			_, err = host.Provide(h, tools.ServiceKey, "", reg)
		case "systemPrompt":
			_, err = host.Provide(h, prompt.ServiceKey, "", prompts)
		case "sessionQuery":
			_, err = host.Provide(h, sq.ServiceKey, "", svc)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	err = h.Start([]host.Plugin{Plugin()}, sources{SectionPath: sec})
	t.Cleanup(func() { _ = h.Close() })
	return h, reg, prompts, err
}

func TestPluginRegistersFiveToolsAndPromptSectionAndDisposeRemovesThem(t *testing.T) {
	h, reg, prompts, err := startHost(t, noSection{}, "tools", "systemPrompt", "sessionQuery")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range reg.Definitions() {
		names = append(names, d.Name)
	}
	want := slices.Clone(toolOrder)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("registered tools = %v, want %v", names, want)
	}
	system, err := prompts.System(prompt.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if system != PromptText || !strings.Contains(system, "prior sessions") {
		t.Fatalf("system prompt = %q", system)
	}
	rendered, err := prompts.Sections(prompt.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rendered) != 1 || rendered[0].Name != "tool:session-query" {
		t.Fatalf("sections = %+v", rendered)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if defs := reg.Definitions(); len(defs) != 0 {
		t.Fatalf("tools left after dispose: %d", len(defs))
	}
	if system, _ := prompts.System(prompt.Scope{}); system != "" {
		t.Fatalf("prompt left after dispose: %q", system)
	}
}

func TestPromptSectionSitsAtOrder113BetweenNeighbours(t *testing.T) {
	h := newHarness(t, newFake(t), DefaultConfig())
	for _, s := range []prompt.Section{{Name: "tool:lsp", Order: 112, Text: "lsp"}, {Name: "tool:goals", Order: 114, Text: "goals"}} {
		if _, err := h.prompts.AddSection(s); err != nil {
			t.Fatal(err)
		}
	}
	system, err := h.prompts.System(prompt.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "lsp\n\n" + PromptText + "\n\ngoals"; system != want {
		t.Fatalf("system prompt = %q, want %q", system, want)
	}
}

func TestToolsRegisterInOrderWithBudgetsClassifiersAndNoPagingParameters(t *testing.T) {
	ts := &toolset{b: &boundary{svc: newFake(t)}, cfg: Config{MaxSearchResults: 7, SearchTimeout: 1234 * time.Millisecond}}
	defs := ts.definitions()
	reg := tools.NewRegistry(nil)
	for i, d := range defs {
		if d.Name != toolOrder[i] {
			t.Fatalf("definition %d = %s, want %s", i, d.Name, toolOrder[i])
		}
		if _, err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
		for _, p := range d.Parameters.Properties {
			for _, banned := range []string{"cursor", "limit", "offset", "cwd", "page"} {
				if strings.Contains(p.Name, banned) {
					t.Errorf("%s exposes parameter %s", d.Name, p.Name)
				}
			}
		}
		if string(d.Output.Schema) != `{"type":"string"}` {
			t.Errorf("%s output schema = %s", d.Name, d.Output.Schema)
		}
		if d.Effect != tools.EffectRead {
			t.Errorf("%s effect = %v, want read", d.Name, d.Effect)
		}
	}
	cases := []struct {
		name    string
		args    string
		timeout time.Duration
		mode    tools.Mode
	}{
		{ToolSessionSearch, `{"query":"x"}`, 1234 * time.Millisecond, tools.Exclusive},
		{ToolEventSearch, `{"query":"x"}`, 1234 * time.Millisecond, tools.Exclusive},
		{ToolSessionTrace, `{}`, 0, tools.Parallel},
		{ToolEventTrace, `{"seq":1}`, 0, tools.Parallel},
		{ToolEventRead, `{"seq":1}`, 0, tools.Parallel},
	}
	for _, tc := range cases {
		d, _ := reg.Get(tc.name)
		if d.Timeout != tc.timeout {
			t.Errorf("%s timeout = %v, want %v", tc.name, d.Timeout, tc.timeout)
		}
		if (d.ConcurrencySafe == nil) != (tc.mode == tools.Exclusive) {
			t.Errorf("%s classifier presence wrong", tc.name)
		}
		if got := reg.ExecutionMode(&tools.Call{Name: tc.name, Arguments: tc.args}); got != tc.mode {
			t.Errorf("%s mode = %v, want %v", tc.name, got, tc.mode)
		}
	}
}

func TestOutputRendersOneTextBlock(t *testing.T) {
	ts := &toolset{b: &boundary{svc: newFake(t)}, cfg: DefaultConfig()}
	for _, d := range ts.definitions() {
		blocks := d.Output.Render(&tools.Call{Name: d.Name}, "Session x — untitled")
		if len(blocks) != 1 || blocks[0].Type != session.BlockText || blocks[0].Text != "Session x — untitled" {
			t.Fatalf("%s renders %#v", d.Name, blocks)
		}
	}
}

// TestToolSchemasMatchTheModelFacingContract pins the exact request schemas
// (name, description, parameters with property order and "description"
// before "items") in registration order.
func TestToolSchemasMatchTheModelFacingContract(t *testing.T) {
	ts := &toolset{b: &boundary{svc: newFake(t)}, cfg: DefaultConfig()}
	var schemas []tools.Schema
	for _, d := range ts.definitions() {
		schemas = append(schemas, tools.SchemaOf(d))
	}
	out, err := session.MarshalIndent(schemas)
	if err != nil {
		t.Fatal(err)
	}
	goldie.New(t, goldie.WithNameSuffix(".golden.json")).Assert(t, "schemas", append(out, '\n'))

	// One schema spelled out by hand, so the golden file is not the only
	// witness of the contract.
	read := tools.SchemaOf(ts.definitions()[4])
	want := `{"type":"object","properties":{"session_id":{"type":"string","description":"Target session id. Omit for the current session."},"seq":{"type":"integer","description":"Target event sequence number."},"before":{"type":"integer","description":"Number of preceding raw events to summarize. Omit for none."},"after":{"type":"integer","description":"Number of following raw events to summarize. Omit for none."}},"required":["seq"]}`
	if string(read.Parameters) != want {
		t.Fatalf("session_event_read parameters =\n%s\nwant\n%s", read.Parameters, want)
	}
	search := string(tools.SchemaOf(ts.definitions()[0]).Parameters)
	for _, frag := range []string{
		`"availability":{"type":"array","description":"Require at least one selected source availability.","items":{"type":"string","enum":["live","persisted"]}}`,
		`"event_surfaces":{"type":"array","description":"Event surfaces to include.","items":{"type":"string","enum":["current","shadowed","log-only"]}}`,
		`"required":["query"]}`,
	} {
		if !strings.Contains(search, frag) {
			t.Fatalf("session_search parameters lack %s:\n%s", frag, search)
		}
	}
	if trace := string(tools.SchemaOf(ts.definitions()[2]).Parameters); strings.Contains(trace, "required") {
		t.Fatalf("session_trace has a required key: %s", trace)
	}
}

func TestCallCards(t *testing.T) {
	ts := &toolset{b: &boundary{svc: newFake(t)}, cfg: DefaultConfig()}
	defs := map[string]*tools.Definition{}
	for _, d := range ts.definitions() {
		defs[d.Name] = d
	}
	cases := []struct {
		tool, args string
		kind       string
		title      string
		rawInput   string // JSON of RawInput
	}{
		{ToolSessionSearch, `{"query":"alpha  beta"}`, tools.KindSearch, "Search prior sessions", `"alpha  beta"`},
		{ToolEventSearch, `{"query":"needle","session_id":"s"}`, tools.KindSearch, "Search session events", `"needle"`},
		{ToolSessionTrace, `{}`, tools.KindRead, "Trace current session", `null`},
		{ToolSessionTrace, `{"session_id":"other"}`, tools.KindRead, "Trace session other", `"other"`},
		{ToolEventTrace, `{"seq":3}`, tools.KindRead, "Trace event 3", `{"seq":3}`},
		{ToolEventTrace, `{"seq":3,"session_id":"other"}`, tools.KindRead, "Trace event 3", `{"session_id":"other","seq":3}`},
		{ToolEventRead, `{"seq":4}`, tools.KindRead, "Read event 4", `{"seq":4}`},
		{ToolEventRead, `{"seq":4.0}`, tools.KindRead, "Read event 4", `{"seq":4}`},
		{ToolEventRead, `{"session_id":"s","seq":9007199254740992,"before":1}`, tools.KindRead, "Read event 9007199254740992", `{"session_id":"s","seq":9007199254740992}`},
	}
	for _, tc := range cases {
		v := defs[tc.tool].PresentCall(&tools.Call{Name: tc.tool, Args: json.RawMessage(tc.args)})
		if raw := defs[tc.tool].PresentCall(&tools.Call{Name: tc.tool, Arguments: tc.args}); raw.Title != v.Title {
			t.Errorf("%s: card from the raw argument string has title %q, want %q", tc.tool, raw.Title, v.Title)
		}
		raw, err := session.Marshal(v.RawInput)
		if err != nil {
			t.Fatal(err)
		}
		if v.Kind != tc.kind || v.Title != tc.title || string(raw) != tc.rawInput {
			t.Errorf("%s %s: card = {%s %q %s}, want {%s %q %s}", tc.tool, tc.args, v.Kind, v.Title, raw, tc.kind, tc.title, tc.rawInput)
		}
	}
}

// loadConfig loads the real layered config with the plugin's section
// registered, in a hermetic home.
func loadConfig(t *testing.T, profile string, sets ...string) (*config.Config, error) {
	t.Helper()
	dir := t.TempDir()
	return config.Load(config.Options{Profile: profile, Home: dir, Cwd: dir, Set: sets,
		Env: func(string) (string, bool) { return "", false }, Sections: []config.Schema{ConfigSchema}})
}

// TestConfigRejectsInvalidValues pins design cases 125 and 126 as dsh
// spells them: the loader, holding the plugin's schema, rejects 0, 1.5 and
// NaN hits and 0, 1.5, +Inf and bound+1 budgets, naming the snake_case key
// (see doc.go), so the plugin is never applied with them.
func TestConfigRejectsInvalidValues(t *testing.T) {
	cases := []struct{ set, want string }{
		{"max_search_results=0", "must be an integer between 1 and 9007199254740991 (got 0)"},
		{"max_search_results=1.5", `must be an integer (got "1.5")`},
		{"max_search_results=NaN", `must be an integer (got "NaN")`},
		{"max_search_results=9007199254740992", "must be an integer between 1 and 9007199254740991"},
		{"search_timeout_ms=0", "must be an integer between 1 and 2147483647 (got 0)"},
		{"search_timeout_ms=1.5", `must be an integer (got "1.5")`},
		{"search_timeout_ms=+Inf", `must be an integer (got "+Inf")`},
		{"search_timeout_ms=2147483648", "must be an integer between 1 and 2147483647 (got 2147483648)"},
	}
	for _, tc := range cases {
		_, err := loadConfig(t, "", SectionPath+"."+tc.set)
		key, _, _ := strings.Cut(tc.set, "=")
		if err == nil || !strings.Contains(err.Error(), `"`+SectionPath+"."+key+`"`) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: err = %v, want one naming the key and containing %q", tc.set, err, tc.want)
		}
	}
}

// TestRealConfigSectionFeedsThePlugin decodes plugins.session_query from the
// real layered config: the defaults, the session-query profile and flags
// at the bounds.
func TestRealConfigSectionFeedsThePlugin(t *testing.T) {
	cfg, err := loadConfig(t, "session-query", "plugins.session_query.search_timeout_ms=2147483647", "plugins.session_query.max_search_results=9007199254740991")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeConfig(cfg.Section(SectionPath))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Config{MaxSearchResults: 1<<53 - 1, SearchTimeout: 2147483647 * time.Millisecond}); got != want {
		t.Fatalf("config = %+v, want %+v", got, want)
	}
	if v := cfg.Value(SectionPath + ".enabled"); v != true {
		t.Fatalf("session-query profile leaves the plugin disabled (enabled=%v)", v)
	}
	def, err := loadConfig(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeConfig(def.Section(SectionPath)); err != nil || got != DefaultConfig() {
		t.Fatalf("default config = %+v, %v", got, err)
	}
	if want := (Config{MaxSearchResults: 100, SearchTimeout: 30 * time.Second}); DefaultConfig() != want {
		t.Fatalf("DefaultConfig() = %+v, want the documented %+v", DefaultConfig(), want)
	}
}

func TestApplyWithoutARequiredServiceFailsNamingIt(t *testing.T) {
	for _, missing := range []string{"tools", "systemPrompt", "sessionQuery"} {
		var provide []string
		for _, s := range []string{"tools", "systemPrompt", "sessionQuery"} {
			if s != missing {
				provide = append(provide, s)
			}
		}
		_, _, _, err := startHost(t, noSection{}, provide...)
		if err == nil || !strings.Contains(err.Error(), PluginName) || !strings.Contains(err.Error(), `"`+missing+`"`) {
			t.Fatalf("without %s: err = %v", missing, err)
		}
	}
}

func TestMountFailureLeavesNothingRegistered(t *testing.T) {
	reg, prompts := tools.NewRegistry(nil), prompt.NewRegistry()
	if _, err := prompts.AddSection(prompt.Section{Name: PromptSection, Text: "taken"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mount(reg, prompts, newFake(t), DefaultConfig(), nil); err == nil {
		t.Fatal("mount succeeded over a duplicate prompt section")
	}
	if n := len(reg.Definitions()); n != 0 {
		t.Fatalf("%d tools left after a failed mount", n)
	}
}
