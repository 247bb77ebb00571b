package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type shownJSON struct {
	Profile  string   `json:"profile"`
	Files    []string `json:"files"`
	Settings []struct {
		Key    string `json:"key"`
		Value  any    `json:"value"`
		Origin string `json:"origin"`
	} `json:"settings"`
	Project struct {
		File    string   `json:"file"`
		Trusted bool     `json:"trusted"`
		Ignored []string `json:"ignored"`
	} `json:"project"`
	TrustFile      string   `json:"trust_file"`
	TrustedFolders []string `json:"trusted_folders"`
}

func (s *sandbox) showJSON(args ...string) shownJSON {
	s.t.Helper()
	r := s.run(append([]string{"config", "show", "--json"}, args...)...)
	if r.code != exitOK {
		s.t.Fatalf("exit code %d: %s", r.code, r.stderr)
	}
	var out shownJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		s.t.Fatalf("output is not JSON: %v\n%s", err, r.stdout)
	}
	return out
}

func (j shownJSON) get(key string) (any, string, bool) {
	for _, s := range j.Settings {
		if s.Key == key {
			return s.Value, s.Origin, true
		}
	}
	return nil, "", false
}

// rowOf returns the table columns of key.
func rowOf(t *testing.T, table, key string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == key {
			return f
		}
	}
	t.Fatalf("no row for %s in:\n%s", key, table)
	return nil
}

func TestConfigShowPrintsEveryKeyValueAndOrigin(t *testing.T) {
	s := newSandbox(t)
	project := s.write(".dsh/config.yaml", "permissions:\n  mode: read-only\n")
	s.env["DSH_LLM_MODEL"] = "deepseek-v4-pro"
	r := s.run("config", "show", "--set", "tools.read.default_limit=50")
	if r.code != exitOK {
		t.Fatalf("exit code %d: %s", r.code, r.stderr)
	}
	tests := []struct {
		key  string
		want []string
	}{
		{"llm.model", []string{`"deepseek-v4-pro"`, "env", "DSH_LLM_MODEL"}},
		{"permissions.mode", []string{`"read-only"`, project}},
		{"tools.read.default_limit", []string{"50", "flag", "--set"}},
		{"llm.provider", []string{`"deepseek"`, "default"}},
		{"home", []string{`"` + s.home + `"`, "env", "DSH_HOME"}},
		{"sessions.dir", []string{`"` + filepath.Join(s.home, "sessions") + `"`, "default"}},
		{"compaction.threshold_ratio", []string{"0.8", "default"}},
	}
	for _, tt := range tests {
		got := rowOf(t, r.stdout, tt.key)[1:]
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s row = %q, want %q", tt.key, got, tt.want)
		}
	}
	table, _, _ := strings.Cut(r.stdout, "\n\n")
	if n := strings.Count(table, "\n") + 1; n != len(s.showJSON().Settings)+1 {
		t.Errorf("table has %d lines, want one per key plus the header", n)
	}
	// Multi-line values stay on one row.
	if row := rowOf(t, r.stdout, "agent.persona"); !strings.Contains(strings.Join(row, " "), "bytes)") {
		t.Errorf("persona row = %q, want a shortened value", row)
	}
}

func TestConfigShowMasksTheAPIKey(t *testing.T) {
	s := newSandbox(t)
	s.env["DSH_LLM_API_KEY"] = "sk-very-secret"
	r := s.run("config", "show")
	if strings.Contains(r.stdout, "sk-very-secret") {
		t.Fatalf("table shows the API key:\n%s", r.stdout)
	}
	if row := rowOf(t, r.stdout, "llm.api_key"); row[1] != `"********"` || row[3] != "DSH_LLM_API_KEY" {
		t.Errorf("llm.api_key row = %q", row)
	}
	j := s.showJSON()
	if v, _, _ := j.get("llm.api_key"); v != "********" {
		t.Errorf("JSON llm.api_key = %v, want masked", v)
	}

	// An unset key is shown as empty, so the user can tell it is missing.
	delete(s.env, "DSH_LLM_API_KEY")
	if v, _, _ := s.showJSON().get("llm.api_key"); v != "" {
		t.Errorf("unset llm.api_key shown as %v, want empty", v)
	}
}

func TestProfileSessionQueryFlipsThePluginKeys(t *testing.T) {
	s := newSandbox(t)
	plain := s.showJSON()
	opted := s.showJSON("--profile", "session-query")
	if opted.Profile != "session-query" || plain.Profile != "default" {
		t.Errorf("profiles = %q, %q", plain.Profile, opted.Profile)
	}
	for _, key := range []string{"plugins.session_query.enabled", "plugins.timeout.enabled", "plugins.spill.enabled"} {
		if v, origin, _ := plain.get(key); v != false || origin != "default" {
			t.Errorf("default profile: %s = %v from %q, want false from default", key, v, origin)
		}
		if v, origin, _ := opted.get(key); v != true || origin != "profile session-query (embedded)" {
			t.Errorf("session-query profile: %s = %v from %q", key, v, origin)
		}
	}
	// Nothing else changes.
	for i, st := range opted.Settings {
		p := plain.Settings[i]
		if p.Key != st.Key {
			t.Fatalf("key order differs at %d: %s vs %s", i, p.Key, st.Key)
		}
		if strings.HasSuffix(st.Key, ".enabled") && strings.HasPrefix(st.Key, "plugins.") {
			continue
		}
		if p.Value != st.Value || p.Origin != st.Origin {
			t.Errorf("%s changed with the profile: %v (%s) -> %v (%s)", st.Key, p.Value, p.Origin, st.Value, st.Origin)
		}
	}
}

func TestUnknownKeyInProjectFileFails(t *testing.T) {
	s := newSandbox(t)
	path := s.write(".dsh/config.yaml", "llm:\n  modle: deepseek-v4-pro\n")
	r := s.run("config", "show")
	if r.code != exitError {
		t.Fatalf("exit code = %d, want %d", r.code, exitError)
	}
	want := `dsh: unknown config key "llm.modle" in ` + path + ` (did you mean "llm.model"?)`
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr = %q, want %q", r.stderr, want)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
}

func TestGlobalFlagsWorkAfterTheSubcommand(t *testing.T) {
	s := newSandbox(t)
	other := filepath.Join(t.TempDir(), "h")
	j := s.showJSON("--home", other, "--set", "llm.model=m1", "--set", "llm.model=m2")
	if v, origin, _ := j.get("home"); v != other || origin != "flag --home" {
		t.Errorf("home = %v from %q", v, origin)
	}
	if v, _, _ := j.get("llm.model"); v != "m2" {
		t.Errorf("llm.model = %v, want the last --set", v)
	}
}

func TestConfigFlagAddsAFileLayer(t *testing.T) {
	s := newSandbox(t)
	path := s.write("ci/dsh.yaml", "permissions: {mode: bypass}\n")
	j := s.showJSON("--config", "ci/dsh.yaml")
	if v, origin, _ := j.get("permissions.mode"); v != "bypass" || origin != path {
		t.Errorf("permissions.mode = %v from %q", v, origin)
	}
	if len(j.Files) != 1 || j.Files[0] != path {
		t.Errorf("files = %v", j.Files)
	}
}

func TestTableValue(t *testing.T) {
	long := strings.Repeat("é", 50)
	tests := []struct {
		in   any
		want string
	}{
		{"", `""`},
		{"a\tb", `"a\tb"`},
		{long, `"` + long + `"`},
		{"first\nsecond\n", `"first"… (13 bytes)`},
		{long + "\n", `"` + strings.Repeat("é", 40) + `"… (101 bytes)`},
		{0.1, "0.1"},
		{int64(5), "5"},
		{true, "true"},
	}
	for _, tt := range tests {
		if got := tableValue(tt.in); got != tt.want {
			t.Errorf("tableValue(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAMistypedDSHVariableIsWarnedAbout(t *testing.T) {
	s := newSandbox(t)
	s.env["DSH_LLM_MODLE"] = "deepseek-v4-pro"
	r := s.exec(execOptions{}, "config", "show")
	if r.code != exitOK || !strings.Contains(r.stderr, "DSH_LLM_MODLE sets no config key") || !strings.Contains(r.stderr, "did you mean DSH_LLM_MODEL?") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	delete(s.env, "DSH_LLM_MODLE")
	s.env["DSH_LLM_MODEL"] = "deepseek-v4-pro"
	if r := s.exec(execOptions{}, "config", "show"); r.code != exitOK || r.stderr != "" {
		t.Errorf("a correct variable warned: %q", r.stderr)
	}
}

func TestConfigInitWritesACommentedTemplateAndNeverOverwrites(t *testing.T) {
	s := newSandbox(t)
	r := s.run("config", "path")
	want := filepath.Join(s.home, "config.yaml")
	if r.code != exitOK || strings.TrimSpace(r.stdout) != want || !strings.Contains(r.stderr, "dsh config init creates it") {
		t.Fatalf("config path before init = %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = s.run("config", "init")
	if r.code != exitOK || !strings.Contains(r.stdout, "Created "+want) {
		t.Fatalf("config init = %d %q %q", r.code, r.stdout, r.stderr)
	}
	info, err := os.Stat(want)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the file was not created readable by the user only: %v %v", info, err)
	}
	written, _ := os.ReadFile(want)
	if !strings.Contains(string(written), "#   model: deepseek-v4-flash") {
		t.Errorf("the template does not list llm.model commented out:\n%s", written)
	}
	// The commented file changes nothing.
	for _, st := range s.showJSON().Settings {
		if strings.Contains(st.Origin, want) {
			t.Errorf("the template set %s", st.Key)
		}
	}
	if r := s.run("config", "path"); r.stderr != "" {
		t.Errorf("config path still says the file is missing: %q", r.stderr)
	}

	// An edited file is never replaced.
	s.write(want, "llm:\n  model: mine\n")
	r = s.run("config", "init")
	if r.code != exitError || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("a second config init = %d %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(want); string(b) != "llm:\n  model: mine\n" {
		t.Errorf("config init overwrote the file: %q", b)
	}
	if r := s.run("config", "init", "--print"); r.code != exitOK || !strings.HasPrefix(r.stdout, "# dsh user configuration") {
		t.Errorf("config init --print = %d %q", r.code, r.stdout)
	}
}

func TestConfigPathWorksWhenTheConfigFileIsBroken(t *testing.T) {
	s := newSandbox(t)
	path := s.write(filepath.Join(s.home, "config.yaml"), "llm: [broken\n")
	if r := s.run("config", "show"); r.code == exitOK {
		t.Fatalf("a broken file loaded")
	}
	if r := s.run("config", "path"); r.code != exitOK || strings.TrimSpace(r.stdout) != path {
		t.Errorf("config path = %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestConfigShowKeyPrintsOneValueOrOneSection(t *testing.T) {
	s := newSandbox(t)
	s.env["DSH_LLM_MODEL"] = "deepseek-v4-pro"
	if r := s.run("config", "show", "llm.model"); r.code != exitOK || r.stdout != "deepseek-v4-pro\n" {
		t.Errorf("config show llm.model = %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := s.run("config", "show", "llm.retry.max_retries"); r.stdout != "5\n" {
		t.Errorf("config show of an integer = %q", r.stdout)
	}
	r := s.run("config", "show", "--json", "llm.model")
	var one struct{ Key, Value, Origin string }
	if err := json.Unmarshal([]byte(r.stdout), &one); err != nil || one.Key != "llm.model" || one.Value != "deepseek-v4-pro" || one.Origin != "env DSH_LLM_MODEL" {
		t.Errorf("config show --json llm.model = %q (%v)", r.stdout, err)
	}
	r = s.run("config", "show", "llm.retry")
	if rowOf(t, r.stdout, "llm.retry.jitter")[1] != "0.1" || strings.Contains(r.stdout, "llm.model") {
		t.Errorf("config show llm.retry:\n%s", r.stdout)
	}
	r = s.run("config", "show", "llm.modle")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown config key "llm.modle" (did you mean llm.model?)`) {
		t.Errorf("an unknown key = %d %q", r.code, r.stderr)
	}
}

// TestConfigShowReportsTheOpenAIProvidersKeyVariableAndModel pins the notes
// the llm section's owner adds (compositions.LLMSchema.Explain) exactly, in
// the table and in JSON.
func TestConfigShowReportsTheOpenAIProvidersKeyVariableAndModel(t *testing.T) {
	s := newSandbox(t)
	s.env["DSH_LLM_PROVIDER"] = "openai"
	const (
		keyOrigin   = "default (OPENAI_API_KEY for llm.provider openai)"
		modelOrigin = "default (DeepSeek's model: set llm.model to one your endpoint serves)"
	)
	j := s.showJSON()
	if v, o, _ := j.get("llm.api_key_env"); v != "OPENAI_API_KEY" || o != keyOrigin {
		t.Errorf("llm.api_key_env for openai = %v (%s)", v, o)
	}
	if v, o, _ := j.get("llm.model"); v != "deepseek-v4-flash" || o != modelOrigin {
		t.Errorf("llm.model for openai = %v (%s)", v, o)
	}
	table := s.run("config", "show", "llm").stdout
	for key, want := range map[string]string{"llm.api_key_env": `"OPENAI_API_KEY" ` + keyOrigin, "llm.model": `"deepseek-v4-flash" ` + modelOrigin} {
		if got := strings.Join(rowOf(t, table, key)[1:], " "); got != want {
			t.Errorf("%s row = %q, want %q", key, got, want)
		}
	}
	// The shipped DeepSeek variable named explicitly still means OpenAI's.
	s.env["DSH_LLM_API_KEY_ENV"] = "DEEPSEEK_API_KEY"
	if v, o, _ := s.showJSON().get("llm.api_key_env"); v != "OPENAI_API_KEY" || o != "env DSH_LLM_API_KEY_ENV (OPENAI_API_KEY for llm.provider openai)" {
		t.Errorf("the DeepSeek variable for openai = %v (%s)", v, o)
	}
	s.env["DSH_LLM_API_KEY_ENV"] = "MY_KEY"
	s.env["DSH_LLM_MODEL"] = "qwen"
	j = s.showJSON()
	if v, o, _ := j.get("llm.api_key_env"); v != "MY_KEY" || o != "env DSH_LLM_API_KEY_ENV" {
		t.Errorf("an explicit variable = %v (%s)", v, o)
	}
	if v, o, _ := j.get("llm.model"); v != "qwen" || o != "env DSH_LLM_MODEL" {
		t.Errorf("an explicit model = %v (%s)", v, o)
	}
	// The deepseek provider takes both as written.
	for _, k := range []string{"DSH_LLM_PROVIDER", "DSH_LLM_API_KEY_ENV", "DSH_LLM_MODEL"} {
		delete(s.env, k)
	}
	j = s.showJSON()
	if v, o, _ := j.get("llm.api_key_env"); v != "DEEPSEEK_API_KEY" || o != "default" {
		t.Errorf("llm.api_key_env for deepseek = %v (%s)", v, o)
	}
	if _, o, _ := j.get("llm.model"); o != "default" {
		t.Errorf("llm.model origin for deepseek = %s", o)
	}
}
