package config_test

import (
	"path/filepath"
	"testing"

	. "github.com/seed-e9b4dba4/dsh/host/config"
)

func TestEnvVariablesMapToKeys(t *testing.T) {
	w := newWorld(t)
	otherHome := filepath.Join(t.TempDir(), "dsh-home")
	w.env["DSH_SESSION_QUERY_OPEN_AT"] = "first-search"
	w.env["DSH_LLM_BASE_URL"] = "http://127.0.0.1:8080/v1"
	w.env["DSH_PERMISSIONS_MODE"] = "read-only"
	w.env["DSH_HOME"] = otherHome
	w.env["DSH_PLUGINS_SESSION_QUERY_ENABLED"] = "true"
	w.env["DSH_LLM_RETRY_JITTER"] = "0.5"
	w.env["DSH_TOOLS_BASH_MAX_TIMEOUT_MS"] = "900000"
	w.env["DSH_LLM_REPLAY_PROVIDER_NAME"] = "openai"
	c := w.load(w.opts())

	want := map[string]any{
		"session_query.open_at":         "first-search",
		"llm.base_url":                  "http://127.0.0.1:8080/v1",
		"permissions.mode":              "read-only",
		"home":                          otherHome,
		"plugins.session_query.enabled": true,
		"llm.retry.jitter":              0.5,
		"tools.bash.max_timeout_ms":     900000,
		"llm.replay.provider_name":      "openai",
	}
	for key, v := range want {
		if got := c.Value(key); got != v {
			t.Errorf("Value(%q) = %#v, want %#v", key, got, v)
		}
		if got, origin := c.Origin(key), "env "+EnvName(key); got != origin {
			t.Errorf("Origin(%q) = %q, want %q", key, got, origin)
		}
	}
	if want := filepath.Join(otherHome, "sessions"); c.Value("sessions.dir") != want {
		t.Errorf("sessions.dir = %q, want it under DSH_HOME (%q)", c.Value("sessions.dir"), want)
	}
	// The session-query plugin switch did not drag the other keys along.
	if c.Value("plugins.spill.enabled") != false {
		t.Error("plugins.spill.enabled = true, want false")
	}
}

func TestEnvNameMapping(t *testing.T) {
	tests := map[string]string{
		"home":                          "DSH_HOME",
		"llm.base_url":                  "DSH_LLM_BASE_URL",
		"permissions.mode":              "DSH_PERMISSIONS_MODE",
		"session_query.open_at":         "DSH_SESSION_QUERY_OPEN_AT",
		"plugins.session_query.enabled": "DSH_PLUGINS_SESSION_QUERY_ENABLED",
	}
	for key, want := range tests {
		if got := EnvName(key); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestEnvNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, key := range shippedTree(t).Keys() {
		name := EnvName(key)
		if prev, dup := seen[name]; dup {
			t.Errorf("keys %q and %q both map to %s", prev, key, name)
		}
		seen[name] = key
	}
}

func TestEmptyEnvVariableCountsAsUnset(t *testing.T) {
	w := newWorld(t)
	w.env["DSH_LLM_MODEL"] = ""
	w.env["DSH_TOOLS_READ_DEFAULT_LIMIT"] = ""
	c := w.load(w.opts())
	if c.Value("llm.model") != "deepseek-v4-flash" || c.Origin("llm.model") != "default" {
		t.Errorf("llm.model = %q from %q, want the default", c.Value("llm.model"), c.Origin("llm.model"))
	}
}

func TestBadEnvValueNamesTheVariable(t *testing.T) {
	tests := []struct {
		name, value, key, want string
	}{
		{"DSH_TOOLS_BASH_MAX_TIMEOUT_MS", "ten", "tools.bash.max_timeout_ms", `must be an integer (got "ten")`},
		{"DSH_TUI_COLOR", "sometimes", "tui.color", `must be true or false (got "sometimes")`},
		{"DSH_COMPACTION_RETAIN_RATIO", "half", "compaction.retain_ratio", `must be a number (got "half")`},
		{"DSH_PERMISSIONS_MODE", "yolo", "permissions.mode", `must be one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.env[tt.name] = tt.value
			err := w.loadErr(w.opts())
			ce := configError(t, err, tt.key)
			if want := "environment variable " + tt.name; ce.Source != want {
				t.Errorf("source = %q, want %q", ce.Source, want)
			}
			wantContains(t, err, "environment variable "+tt.name+" "+tt.want)
		})
	}
}

func TestUnrelatedDSHVariablesAreIgnored(t *testing.T) {
	w := newWorld(t)
	w.env["DSH_SNAPSHOT"] = "replay"
	w.env["DSH_LLM"] = "x"
	w.load(w.opts())
}
