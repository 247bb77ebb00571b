package config_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	. "github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/plugins/spill"
)

func TestRegisteredSectionRulesHoldInEveryLayer(t *testing.T) {
	w := newWorld(t)
	path := w.userFile("plugins:\n  spill:\n    max_inline_bytes: -1\n")
	err := w.loadErr(w.opts())
	e := configError(t, err, "plugins.spill.max_inline_bytes")
	if e.Source != path || e.Problem != "must be an integer of at least 0 (got -1)" {
		t.Errorf("error = %v, want the user file and the rule's problem", e)
	}
	o := w.opts()
	w.userFile("")
	o.Set = []string{"plugins.session_query.search_timeout_ms=2147483648"}
	wantContains(t, w.loadErr(o), `config key "plugins.session_query.search_timeout_ms" in flag --set`, "between 1 and 2147483647")
	w.env["DSH_PLUGINS_SPILL_ENABLED"] = "maybe"
	wantContains(t, w.loadErr(w.opts()), `config key "plugins.spill.enabled" in environment variable DSH_PLUGINS_SPILL_ENABLED must be true or false (got "maybe")`)
}

func TestRegisteredPathKeyIsResolved(t *testing.T) {
	w := newWorld(t)
	w.userFile("plugins:\n  spill:\n    root: spills\n")
	c := w.load(w.opts())
	if got, want := c.Value("plugins.spill.root"), filepath.Join(w.home, "spills"); got != want {
		t.Errorf("plugins.spill.root = %v, want %s (relative to the file)", got, want)
	}
}

// TestUnregisteredSectionIsSkippedOnlyInBuiltinFiles: a Load that registers
// no plugin section still reads dsh's own defaults and profiles, which carry
// those sections, but a user's file naming them is an unknown key.
func TestUnregisteredSectionIsSkippedOnlyInBuiltinFiles(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	o.Sections = nil
	o.Profile = "session-query"
	c := w.load(o)
	if slices.ContainsFunc(c.Keys(), func(k string) bool { return strings.HasPrefix(k, "plugins.") }) {
		t.Errorf("keys include plugin sections nobody registered: %v", c.Keys())
	}
	if err := c.Section("plugins.spill").Decode(&spill.Config{}); err == nil || !strings.Contains(err.Error(), `unknown config section "plugins.spill"`) {
		t.Errorf("Section(plugins.spill) = %v, want unknown", err)
	}
	path := w.userFile("plugins:\n  spill:\n    enabled: true\n")
	e := configError(t, w.loadErr(o), "plugins")
	if !e.Unknown || e.Source != path {
		t.Errorf("error = %v, want an unknown key in %s", e, path)
	}
}

func TestSchemaDeclarationMistakesAreErrors(t *testing.T) {
	type one struct {
		N int    `mapstructure:"n"`
		S string `mapstructure:"s"`
	}
	cases := []struct {
		name string
		s    []Schema
		want string
	}{
		{"built-in key", []Schema{SchemaOf[one]("home", nil)}, `config section "home" is declared twice or overlaps a built-in key`},
		{"under a built-in key", []Schema{SchemaOf[one]("home.x", nil)}, `config section "home.x" lies under the key "home"`},
		{"under a registered key", []Schema{SchemaOf[one]("plugins.x", nil), SchemaOf[one]("plugins.x.n.y", nil)}, `config section "plugins.x.n.y" lies under the key "plugins.x.n"`},
		{"twice", []Schema{SchemaOf[one]("plugins.x", nil), SchemaOf[one]("plugins.x", nil)}, `config section "plugins.x" is declared twice`},
		{"rule for no key", []Schema{SchemaOf[one]("plugins.x", map[string]Rule{"m": IntAtLeast(0)})}, `has a rule for "m", which is not one of its keys`},
		{"path not a string", []Schema{SchemaOf[one]("plugins.x", nil, "n")}, `names "n" as a path, which is not one of its string keys`},
		{"not a struct", []Schema{SchemaOf[int]("plugins.x", nil)}, "needs a path and a struct type"},
		{"pair of a string", []Schema{{Path: "plugins.x", Type: reflect.TypeFor[one](), Pairs: []Pair{{Low: "n", High: "s"}}}},
			`relates "n" and "s", which are not two of its keys of one numeric type`},
		{"pair of no key", []Schema{{Path: "plugins.x", Type: reflect.TypeFor[one](), Pairs: []Pair{{Low: "n", High: "m"}}}},
			`relates "n" and "m"`},
		{"narrowing no key", []Schema{{Path: "plugins.x", Type: reflect.TypeFor[one](),
			Stricter: map[string]func(below, project any) bool{"m": func(any, any) bool { return true }}}},
			`narrows "m", which is not one of its keys`},
		{"explaining no key", []Schema{{Path: "plugins.x", Type: reflect.TypeFor[one](),
			Explain: map[string]Explainer{"m": func(any, bool) (any, string) { return nil, "" }}}},
			`explains "m", which is not one of its keys`},
	}
	for _, tc := range cases {
		_, err := TreeOf(tc.s)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	w := newWorld(t)
	o := w.opts()
	o.Sections = append(o.Sections, SchemaOf[one]("plugins.spill", nil))
	wantContains(t, w.loadErr(o), `config section "plugins.spill" is declared twice`)
}

func TestDecodeDefaultsReadsTheEmbeddedFile(t *testing.T) {
	var got spill.Config
	if err := spill.ConfigSchema.DecodeDefaults(&got); err != nil {
		t.Fatal(err)
	}
	if want := (spill.Config{MaxInlineBytes: 50000, KeepDays: 7, KeepTotalBytes: 1 << 30}); got != want {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	type missing struct {
		X int `mapstructure:"x"`
	}
	if err := SchemaOf[missing]("plugins.nope", nil).DecodeDefaults(&missing{}); err == nil || !strings.Contains(err.Error(), `has no section "plugins.nope"`) {
		t.Errorf("err = %v", err)
	}
}

func TestCheckAppliesASectionsRulesWithoutLoad(t *testing.T) {
	type sec struct {
		Lo    int     `mapstructure:"lo"`
		Hi    int     `mapstructure:"hi"`
		Ratio float64 `mapstructure:"ratio"`
	}
	s := Schema{Path: "plugins.x", Type: reflect.TypeFor[sec](),
		Rules: map[string]Rule{"lo": IntAtLeast(1), "ratio": FloatIn(0, 1, false)},
		Pairs: []Pair{{Low: "lo", High: "hi"}}}
	if err := s.Check(sec{Lo: 1, Hi: 2, Ratio: 0.5}); err != nil {
		t.Errorf("Check of a valid value: %v", err)
	}
	err := s.Check(sec{Lo: 3, Hi: 2, Ratio: 1.5})
	wantContains(t, err, `config key "plugins.x.ratio" must be a number greater than 0 and at most 1 (got 1.5)`,
		`config key "plugins.x.lo" must be at most plugins.x.hi (2)`)
	wantContains(t, s.Check(sec{Lo: 0, Hi: 2, Ratio: 1}), `config key "plugins.x.lo" must be a positive integer (got 0)`)
	wantContains(t, s.Check(struct{}{}), `holds a config_test.sec, not a struct {}`)
}

// TestExplainSaysWhatTheOwnerMakesOfAValue: an Explainer sees the loaded
// section and whether the key is at its default; a key without one, or one
// whose Explainer adds nothing, is the loaded value.
func TestExplainSaysWhatTheOwnerMakesOfAValue(t *testing.T) {
	s := spill.ConfigSchema
	s.Explain = map[string]Explainer{"max_inline_bytes": func(v any, isDefault bool) (any, string) {
		if c := v.(spill.Config); c.MaxInlineBytes < 1000 {
			return 1000, fmt.Sprintf("raised to 1000 (enabled %v, default %v)", c.Enabled, isDefault)
		}
		return nil, ""
	}}
	w := newWorld(t)
	o := w.opts()
	o.Sections = slices.Clone(o.Sections)
	i := slices.IndexFunc(o.Sections, func(s Schema) bool { return s.Path == spill.SectionPath })
	o.Sections[i] = s
	o.Set = []string{"plugins.spill.max_inline_bytes=10", "plugins.spill.enabled=true"}
	c := w.load(o)
	if v, note := c.Explain("plugins.spill.max_inline_bytes"); v != 1000 || note != "raised to 1000 (enabled true, default false)" {
		t.Errorf("Explain(max_inline_bytes) = %v, %q", v, note)
	}
	if v, note := c.Explain("plugins.spill.keep_days"); v != 7 || note != "" {
		t.Errorf("Explain of a key without an Explainer = %v, %q", v, note)
	}
	o.Set = nil
	if v, note := w.load(o).Explain("plugins.spill.max_inline_bytes"); v != 50000 || note != "" {
		t.Errorf("Explain of a value taken as written = %v, %q", v, note)
	}
}

func TestGetReturnsTheLoadedSection(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	o.Set = []string{"plugins.spill.max_inline_bytes=800"}
	c := w.load(o)
	got, err := Get[spill.Config](c, spill.ConfigSchema)
	if err != nil || got.MaxInlineBytes != 800 || got.KeepDays != 7 {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if _, err := Get[codingtools.Config](c, spill.ConfigSchema); err == nil {
		t.Error("Get with the wrong type succeeded")
	}
	o.Sections, o.Set = nil, nil
	if _, err := Get[spill.Config](w.load(o), spill.ConfigSchema); err == nil || !strings.Contains(err.Error(), `unknown config section "plugins.spill"`) {
		t.Errorf("Get of an unregistered section: %v", err)
	}
}
