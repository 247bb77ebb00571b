package sessionquery

import (
	"encoding/json"
	"log/slog"
	"math"
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

// rawSection hands the plugin a section value directly, so tests can feed
// values no config file can spell (NaN, +Inf).
type rawSection section

func (s rawSection) Decode(out any) error {
	*out.(*section) = section(s)
	return nil
}

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
	h, reg, prompts, err := startHost(t, rawSection{Enabled: true}, "tools", "systemPrompt", "sessionQuery")
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

func TestConfigRejectsInvalidValuesBeforeRegisteringAnything(t *testing.T) {
	cases := []struct {
		name string
		sec  rawSection
		want string
	}{
		{"max zero", rawSection{MaxSearchResults: 0}, "max_search_results must be a positive safe integer"},
		{"max fraction", rawSection{MaxSearchResults: 1.5}, "max_search_results must be a positive safe integer"},
		{"max NaN", rawSection{MaxSearchResults: math.NaN()}, "max_search_results must be a positive safe integer"},
		{"max 2^53", rawSection{MaxSearchResults: float64(1 << 53)}, "max_search_results must be a positive safe integer"},
		{"max string", rawSection{MaxSearchResults: "100"}, "max_search_results must be a positive safe integer"},
		{"timeout zero", rawSection{SearchTimeoutMs: 0}, "no greater than 2147483647"},
		{"timeout fraction", rawSection{SearchTimeoutMs: 1.5}, "no greater than 2147483647"},
		{"timeout infinite", rawSection{SearchTimeoutMs: math.Inf(1)}, "no greater than 2147483647"},
		{"timeout above max", rawSection{SearchTimeoutMs: int64(2147483648)}, "no greater than 2147483647"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, reg, prompts, err := startHost(t, tc.sec, "tools", "systemPrompt", "sessionQuery")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "tool-session-query") {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if len(reg.Definitions()) != 0 {
				t.Fatal("tools registered despite invalid config")
			}
			if system, _ := prompts.System(prompt.Scope{}); system != "" {
				t.Fatal("prompt registered despite invalid config")
			}
		})
	}
}

func TestConfigAcceptsBoundsAndDefaults(t *testing.T) {
	cases := []struct {
		sec  host.Section
		want Config
	}{
		{rawSection{}, DefaultConfig()},
		{rawSection{MaxSearchResults: float64(1<<53 - 1), SearchTimeoutMs: json.Number("2147483647")},
			Config{MaxSearchResults: 1<<53 - 1, SearchTimeout: 2147483647 * time.Millisecond}},
		{rawSection{MaxSearchResults: 1, SearchTimeoutMs: uint16(1)}, Config{MaxSearchResults: 1, SearchTimeout: time.Millisecond}},
	}
	for _, tc := range cases {
		got, err := decodeConfig(tc.sec)
		if err != nil || got != tc.want {
			t.Fatalf("decodeConfig(%+v) = %+v, %v; want %+v", tc.sec, got, err, tc.want)
		}
	}
}

// TestRealConfigSectionFeedsThePlugin decodes plugins.session_query from the
// real layered config: the defaults, the session-query profile and a flag
// at the timer bound, and the loader's own rejection of 1.5 and bound+1.
func TestRealConfigSectionFeedsThePlugin(t *testing.T) {
	load := func(profile string, sets ...string) (*config.Config, error) {
		dir := t.TempDir()
		return config.Load(config.Options{Profile: profile, Home: dir, Cwd: dir, Set: sets,
			Env: func(string) (string, bool) { return "", false }})
	}
	cfg, err := load("session-query", "plugins.session_query.search_timeout_ms=2147483647", "plugins.session_query.max_search_results=7")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeConfig(cfg.Section(SectionPath))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Config{MaxSearchResults: 7, SearchTimeout: 2147483647 * time.Millisecond}); got != want {
		t.Fatalf("config = %+v, want %+v", got, want)
	}
	if v := cfg.Value(SectionPath + ".enabled"); v != true {
		t.Fatalf("session-query profile leaves the plugin disabled (enabled=%v)", v)
	}
	def, err := load("")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeConfig(def.Section(SectionPath)); err != nil || got != DefaultConfig() {
		t.Fatalf("default config = %+v, %v", got, err)
	}
	for _, bad := range []string{"plugins.session_query.search_timeout_ms=1.5", "plugins.session_query.search_timeout_ms=2147483648"} {
		if _, err := load("", bad); err == nil || !strings.Contains(err.Error(), "search_timeout_ms") {
			t.Fatalf("loading %s: err = %v", bad, err)
		}
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
		_, _, _, err := startHost(t, rawSection{}, provide...)
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
