package config_test

import (
	"path/filepath"
	"testing"
)

func TestSetFlagAppliesInOrderAndBeatsEnv(t *testing.T) {
	w := newWorld(t)
	w.env["DSH_PERMISSIONS_MODE"] = "read-only"
	o := w.opts()
	o.Set = []string{"permissions.mode=accept-edits", "llm.max_tokens=2048", "permissions.mode=bypass", "llm.model = spaced"}
	c := w.load(o)
	if c.Value("permissions.mode") != "bypass" || c.Origin("permissions.mode") != "flag --set" {
		t.Errorf("permissions.mode = %q from %q, want bypass from flag --set", c.Value("permissions.mode"), c.Origin("permissions.mode"))
	}
	if c.Value("llm.max_tokens") != 2048 {
		t.Errorf("llm.max_tokens = %d, want 2048", c.Value("llm.max_tokens"))
	}
	// Only the key is trimmed: a value keeps its spaces.
	if c.Value("llm.model") != " spaced" {
		t.Errorf("llm.model = %q, want %q", c.Value("llm.model"), " spaced")
	}
}

func TestSetFlagValueMayContainEquals(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	o.Set = []string{"llm.api_key=abc=def"}
	if c := w.load(o); c.Value("llm.api_key") != "abc=def" {
		t.Errorf("llm.api_key = %q, want abc=def", c.Value("llm.api_key"))
	}
}

func TestMalformedSetFlags(t *testing.T) {
	tests := []struct {
		set, want string
	}{
		{"llm.model", `flag --set "llm.model" must have the form key=value`},
		{"=x", `flag --set "=x" must have the form key=value`},
		{"llm=x", `config key "llm" in flag --set llm=x is a section; set one of its keys instead`},
		{"tui.mouse=on", `config key "tui.mouse" in flag --set tui.mouse=on must be true or false (got "on")`},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			w := newWorld(t)
			o := w.opts()
			o.Set = []string{tt.set}
			wantContains(t, w.loadErr(o), tt.want)
		})
	}
}

func TestHomeFlagBeatsDSHHomeAndFindsTheUserFile(t *testing.T) {
	w := newWorld(t)
	flagHome := filepath.Join(t.TempDir(), "flag-home")
	w.write(filepath.Join(flagHome, "config.yaml"), "llm: {model: flag-home-model}\n")
	w.env["DSH_HOME"] = filepath.Join(t.TempDir(), "env-home")
	o := w.opts()
	o.Home = flagHome
	c := w.load(o)
	if c.Home != flagHome || c.Origin("home") != "flag --home" {
		t.Errorf("home = %q from %q, want %q from flag --home", c.Home, c.Origin("home"), flagHome)
	}
	if c.Value("llm.model") != "flag-home-model" {
		t.Errorf("llm.model = %q, want the model from %s/config.yaml", c.Value("llm.model"), flagHome)
	}
}

func TestSetHomeComesAfterHomeFlag(t *testing.T) {
	w := newWorld(t)
	setHome := filepath.Join(t.TempDir(), "set-home")
	o := w.opts()
	o.Home = filepath.Join(t.TempDir(), "flag-home")
	o.Set = []string{"home=" + setHome}
	if c := w.load(o); c.Home != setHome {
		t.Errorf("home = %q, want %q", c.Home, setHome)
	}
}
