package config_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed-e9b4dba4/dsh/plugins/spill"
)

func TestLoadDefaultsGivesEveryKeyFromDefaultOrigin(t *testing.T) {
	w := newWorld(t)
	c := w.load(w.opts())

	for _, key := range c.Keys() {
		if got := c.Origin(key); got != "default" {
			t.Errorf("Origin(%q) = %q, want default", key, got)
		}
	}
	checks := map[string]any{
		"llm.provider":                            "deepseek",
		"llm.model":                               "deepseek-v4-flash",
		"llm.api_key_env":                         "DEEPSEEK_API_KEY",
		"llm.retry.jitter":                        0.1,
		"permissions.mode":                        "default",
		"tools.bash.max_timeout_ms":               600000,
		"session_query.open_at":                   "startup",
		"plugins.session_query.enabled":           false,
		"plugins.spill.max_inline_bytes":          50000,
		"plugins.session_query.search_timeout_ms": 30000,
		"compaction.threshold_ratio":              0.8,
		"runtime.fixed_time_ms":                   int64(0),
	}
	for key, want := range checks {
		if got := c.Value(key); got != want {
			t.Errorf("Value(%q) = %#v, want %#v", key, got, want)
		}
	}
	if c.Home != w.home {
		t.Errorf("Home = %q, want %q (~/.dsh)", c.Home, w.home)
	}
	if want := filepath.Join(w.home, "sessions"); c.Value("sessions.dir") != want {
		t.Errorf("sessions.dir = %q, want %q", c.Value("sessions.dir"), want)
	}
	if want := filepath.Join(w.home, "session-query.db"); c.Value("session_query.path") != want {
		t.Errorf("SessionQuery.Path = %q, want %q", c.Value("session_query.path"), want)
	}
	if c.Profile() != "default" {
		t.Errorf("Profile() = %q, want default", c.Profile())
	}
	if len(c.Files()) != 0 {
		t.Errorf("Files() = %v, want none", c.Files())
	}
}

// TestLayerPrecedence adds the seven layers one at a time, lowest first, and
// checks that each new layer overrides everything below it.
func TestLayerPrecedence(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	profile := filepath.Join(w.home, "profiles", "team.yaml")
	user := filepath.Join(w.home, "config.yaml")
	project := filepath.Join(w.cwd, ".dsh", "config.yaml")
	explicit := filepath.Join(w.cwd, "extra.yaml")
	steps := []struct {
		add           func()
		model, origin string
	}{
		{func() {}, "deepseek-v4-flash", "default"},
		{func() { w.homeProfile("team", "llm: {model: from-profile}\n"); o.Profile = "team" },
			"from-profile", "profile team (" + profile + ")"},
		{func() { w.userFile("llm: {model: from-user}\n") }, "from-user", user},
		{func() { w.projectFile("llm: {model: from-project}\n") }, "from-project", project},
		{func() { w.write("extra.yaml", "llm: {model: from-config}\n"); o.ConfigFile = "extra.yaml" },
			"from-config", explicit},
		{func() { w.env["DSH_LLM_MODEL"] = "from-env" }, "from-env", "env DSH_LLM_MODEL"},
		{func() { o.Set = []string{"llm.model=from-flag"} }, "from-flag", "flag --set"},
	}
	for i, step := range steps {
		step.add()
		c := w.load(o)
		if c.Value("llm.model") != step.model {
			t.Errorf("with %d layers: llm.model = %q, want %q", i+1, c.Value("llm.model"), step.model)
		}
		if got := c.Origin("llm.model"); got != step.origin {
			t.Errorf("with %d layers: Origin(llm.model) = %q, want %q", i+1, got, step.origin)
		}
	}
	c := w.load(o)
	if want := []string{profile, user, project, explicit}; !slices.Equal(c.Files(), want) {
		t.Errorf("Files() = %v, want %v", c.Files(), want)
	}
}

func TestLayersMergeKeyByKey(t *testing.T) {
	w := newWorld(t)
	w.userFile("llm: {model: user-model, max_tokens: 4096}\n")
	w.projectFile("llm: {model: project-model}\n")
	c := w.load(w.opts())
	if c.Value("llm.model") != "project-model" || c.Origin("llm.model") != filepath.Join(w.cwd, ".dsh", "config.yaml") {
		t.Errorf("llm.model = %q from %q, want project-model from the project file", c.Value("llm.model"), c.Origin("llm.model"))
	}
	if c.Value("llm.max_tokens") != 4096 || c.Origin("llm.max_tokens") != filepath.Join(w.home, "config.yaml") {
		t.Errorf("llm.max_tokens = %d from %q, want 4096 from the user file", c.Value("llm.max_tokens"), c.Origin("llm.max_tokens"))
	}
	if c.Value("llm.provider") != "deepseek" || c.Origin("llm.provider") != "default" {
		t.Errorf("llm.provider = %q from %q, want the default", c.Value("llm.provider"), c.Origin("llm.provider"))
	}
}

func TestEmbeddedSessionQueryProfileEnablesThePlugins(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	o.Profile = "session-query"
	c := w.load(o)
	for _, key := range []string{"plugins.session_query.enabled", "plugins.timeout.enabled", "plugins.spill.enabled"} {
		if c.Value(key) != true {
			t.Errorf("%s = %v, want true", key, c.Value(key))
		}
		if got, want := c.Origin(key), "profile session-query (embedded)"; got != want {
			t.Errorf("Origin(%s) = %q, want %q", key, got, want)
		}
	}
	plain := w.load(w.opts())
	for _, key := range []string{"plugins.session_query.enabled", "plugins.timeout.enabled", "plugins.spill.enabled"} {
		if plain.Value(key) != false {
			t.Errorf("default profile sets %s = %v", key, plain.Value(key))
		}
	}
}

func TestHomeProfileReplacesEmbeddedProfileOfSameName(t *testing.T) {
	w := newWorld(t)
	path := w.homeProfile("session-query", "plugins: {spill: {enabled: true, max_inline_bytes: 800}}\n")
	o := w.opts()
	o.Profile = "session-query"
	c := w.load(o)
	var sp spill.Config
	if err := c.Section("plugins.spill").Decode(&sp); err != nil {
		t.Fatal(err)
	}
	if !sp.Enabled || sp.MaxInlineBytes != 800 {
		t.Errorf("spill = %+v, want the home profile's values", sp)
	}
	if got, want := c.Origin("plugins.spill.max_inline_bytes"), "profile session-query ("+path+")"; got != want {
		t.Errorf("origin = %q, want %q", got, want)
	}
	// The embedded profile is not applied underneath the home one.
	if c.Value("plugins.session_query.enabled") != false {
		t.Error("plugins.session_query.enabled = true, want the embedded profile ignored")
	}
}

func TestUnknownProfileListsAvailableProfiles(t *testing.T) {
	w := newWorld(t)
	w.homeProfile("mine", "")
	o := w.opts()
	o.Profile = "nope"
	err := w.loadErr(o)
	wantContains(t, err, `unknown profile "nope"`, "default, demo, mine, session-query, snapshot", filepath.Join(w.home, "profiles", "nope.yaml"))
}

func TestInvalidProfileNameIsRejected(t *testing.T) {
	w := newWorld(t)
	for _, name := range []string{"../config", ".hidden", "a/b"} {
		o := w.opts()
		o.Profile = name
		wantContains(t, w.loadErr(o), "invalid profile name")
	}
}

func TestEmptyProfileFileIsAnEmptyOverlay(t *testing.T) {
	w := newWorld(t)
	w.homeProfile("blank", "# nothing yet\n")
	o := w.opts()
	o.Profile = "blank"
	c := w.load(o)
	if c.Profile() != "blank" || c.Value("llm.model") != "deepseek-v4-flash" {
		t.Errorf("profile %q, model %q", c.Profile(), c.Value("llm.model"))
	}
}

func TestConfigFileMustExist(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	o.ConfigFile = "missing.yaml"
	wantContains(t, w.loadErr(o), filepath.Join(w.cwd, "missing.yaml"), "does not exist")
}

func TestConfigFileBeatsProjectFileAndLosesToEnv(t *testing.T) {
	w := newWorld(t)
	w.projectFile("permissions: {mode: read-only}\ntools: {read: {default_limit: 10}}\n")
	path := w.write(filepath.Join(t.TempDir(), "ci.yaml"), "permissions: {mode: bypass}\nllm: {model: cfg}\n")
	w.env["DSH_LLM_MODEL"] = "env-model"
	o := w.opts()
	o.ConfigFile = path
	c := w.load(o)
	if c.Value("permissions.mode") != "bypass" || c.Origin("permissions.mode") != path {
		t.Errorf("permissions.mode = %q from %q, want bypass from %s", c.Value("permissions.mode"), c.Origin("permissions.mode"), path)
	}
	if c.Value("tools.read.default_limit") != 10 {
		t.Errorf("tools.read.default_limit = %d, want 10 from the project file", c.Value("tools.read.default_limit"))
	}
	if c.Value("llm.model") != "env-model" {
		t.Errorf("llm.model = %q, want env-model", c.Value("llm.model"))
	}
}

func TestUnparsableYAMLNamesTheFile(t *testing.T) {
	w := newWorld(t)
	path := w.projectFile("llm: [unclosed\n")
	wantContains(t, w.loadErr(w.opts()), "cannot parse "+path)
}
