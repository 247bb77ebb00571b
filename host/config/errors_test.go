package config_test

import (
	"errors"
	"path/filepath"
	"testing"

	. "github.com/seed-e9b4dba4/dsh/host/config"
)

func TestUnknownKeyNamesKeyAndSource(t *testing.T) {
	tests := []struct {
		name  string
		setup func(w *world, o *Options) (source string)
		key   string
		hint  string
	}{
		{
			name: "project file",
			setup: func(w *world, o *Options) string {
				return w.projectFile("llm:\n  modle: deepseek-v4-pro\n")
			},
			key: "llm.modle", hint: "llm.model",
		},
		{
			name: "user file",
			setup: func(w *world, o *Options) string {
				return w.userFile("tool:\n  bash: {max_timeout_ms: 1}\n")
			},
			key: "tool", hint: "tools",
		},
		{
			name: "config file",
			setup: func(w *world, o *Options) string {
				o.ConfigFile = w.write("ci.yaml", "permissions: {mdoe: bypass}\n")
				return o.ConfigFile
			},
			key: "permissions.mdoe", hint: "permissions.mode",
		},
		{
			name: "home profile",
			setup: func(w *world, o *Options) string {
				o.Profile = "p"
				return w.homeProfile("p", "colour: true\n")
			},
			key: "colour",
		},
		{
			name: "set flag",
			setup: func(w *world, o *Options) string {
				o.Set = []string{"session_query.opne_at=never"}
				return "flag --set session_query.opne_at=never"
			},
			key: "session_query.opne_at", hint: "session_query.open_at",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			o := w.opts()
			source := tt.setup(w, &o)
			err := w.loadErr(o)
			ce := configError(t, err, tt.key)
			if !ce.Unknown || ce.Source != source || ce.Hint != tt.hint {
				t.Errorf("error = %+v, want unknown key from %s with hint %q", ce, source, tt.hint)
			}
			wantContains(t, err, `unknown config key "`+tt.key+`" in `+source)
		})
	}
}

func TestWrongTypeNamesKeyFileAndExpectedType(t *testing.T) {
	tests := []struct {
		yaml, key, want string
	}{
		{"tools:\n  bash:\n    max_timeout_ms: soon\n", "tools.bash.max_timeout_ms", "must be an integer"},
		{"tools: {bash: {max_timeout_ms: 1.5}}\n", "tools.bash.max_timeout_ms", "must be an integer"},
		{"tui: {color: yes}\n", "tui.color", "must be true or false"},
		{"llm: {model: 4}\n", "llm.model", "must be a string (quote the value)"},
		{"compaction: {threshold_ratio: high}\n", "compaction.threshold_ratio", "must be a number"},
		{"llm: deepseek\n", "llm", "must be a mapping of keys"},
		{"llm: {model: {name: x}}\n", "llm.model", "must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			w := newWorld(t)
			path := w.projectFile(tt.yaml)
			err := w.loadErr(w.opts())
			ce := configError(t, err, tt.key)
			if ce.Source != path {
				t.Errorf("source = %q, want %q", ce.Source, path)
			}
			wantContains(t, err, `config key "`+tt.key+`" in `+path+" "+tt.want)
		})
	}
}

func TestWholeNumberFloatIsAcceptedAsInteger(t *testing.T) {
	w := newWorld(t)
	w.projectFile("llm: {max_tokens: 1e5}\n")
	if c := w.load(w.opts()); c.Value("llm.max_tokens") != 100000 {
		t.Errorf("llm.max_tokens = %d, want 100000", c.Value("llm.max_tokens"))
	}
}

func TestInvalidValuesAreRejected(t *testing.T) {
	tests := []struct {
		set, key, want string
	}{
		{"permissions.mode=yolo", "permissions.mode", `must be one of "default", "accept-edits", "auto", "read-only", "bypass" (got "yolo")`},
		{"llm.provider=anthropic", "llm.provider", `must be one of "deepseek", "openai", "replay"`},
		{"session_query.open_at=later", "session_query.open_at", `must be one of "startup", "first-search", "never"`},
		{"session_query.journal_mode=memory", "session_query.journal_mode", `must be one of "wal", "delete", "truncate", "persist"`},
		{"runtime.clock=wall", "runtime.clock", `must be one of "system", "fixed"`},
		{"runtime.ids=uuid", "runtime.ids", `must be one of "random", "sequential"`},
		{"llm.reasoning_effort=medium", "llm.reasoning_effort", `must be one of "", "off", "low", "high", "max"`},
		{"log.level=trace", "log.level", `must be one of "debug", "info", "warn", "error"`},
		{"compaction.threshold_ratio=0", "compaction.threshold_ratio", "must be a number greater than 0 and at most 1"},
		{"compaction.retain_ratio=1.5", "compaction.retain_ratio", "must be a number greater than 0 and at most 1"},
		{"compaction.threshold_ratio=NaN", "compaction.threshold_ratio", "must be a number greater than 0"},
		{"llm.retry.jitter=-0.1", "llm.retry.jitter", "must be a number from 0 to 1"},
		{"tools.bash.max_timeout_ms=0", "tools.bash.max_timeout_ms", "must be a positive integer (got 0)"},
		{"llm.stream_idle_timeout_ms=-5", "llm.stream_idle_timeout_ms", "must be a positive integer"},
		{"llm.max_tokens=-1", "llm.max_tokens", "must be an integer of at least 0"},
		{"agent.max_parallel_tool_calls=0", "agent.max_parallel_tool_calls", "must be a positive integer"},
		{"session_query.read_window_max=-1", "session_query.read_window_max", "must be an integer of at least 0 (got -1)"},
		{"session_query.max_limit=9007199254740992", "session_query.max_limit", "must be an integer between 1 and 9007199254740990"},
		{"plugins.session_query.search_timeout_ms=2147483648", "plugins.session_query.search_timeout_ms", "must be an integer between 1 and 2147483647"},
		{"plugins.session_query.max_search_results=0", "plugins.session_query.max_search_results", "must be an integer between 1 and 9007199254740991 (got 0)"},
		{"plugins.spill.max_inline_bytes=-1", "plugins.spill.max_inline_bytes", "must be an integer of at least 0"},
		{"llm.base_url=ftp://example.com", "llm.base_url", "must be an http or https URL"},
		{"llm.base_url=api.deepseek.com", "llm.base_url", "must be an http or https URL"},
		{"llm.api_key_env=1KEY", "llm.api_key_env", "must be an environment variable name"},
		{"llm.model=", "llm.model", "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			w := newWorld(t)
			o := w.opts()
			o.Set = []string{tt.set}
			err := w.loadErr(o)
			configError(t, err, tt.key)
			wantContains(t, err, `config key "`+tt.key+`" in flag --set `+tt.set+" "+tt.want)
		})
	}
}

func TestInvalidValueInFileNamesTheFile(t *testing.T) {
	w := newWorld(t)
	path := w.projectFile("permissions:\n  mode: yolo\n")
	err := w.loadErr(w.opts())
	wantContains(t, err, `config key "permissions.mode" in `+path+` must be one of`)
}

func TestInvalidValueInLowerLayerFailsEvenWhenOverridden(t *testing.T) {
	w := newWorld(t)
	path := w.userFile("permissions: {mode: yolo}\n")
	o := w.opts()
	o.Set = []string{"permissions.mode=bypass"}
	wantContains(t, w.loadErr(o), path)
}

func TestCrossKeyRulesBlameTheHigherLayer(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		file string
		key  string
		want string
	}{
		{
			name: "max below default",
			set:  []string{"tools.bash.max_timeout_ms=1000"},
			key:  "tools.bash.max_timeout_ms",
			want: `in flag --set tools.bash.max_timeout_ms=1000 must be at least tools.bash.default_timeout_ms (120000, from default)`,
		},
		{
			name: "default above max",
			file: "session_query: {default_limit: 500}\n",
			key:  "session_query.default_limit",
			want: `must be at most session_query.max_limit (100, from default)`,
		},
		{
			name: "retain not below threshold",
			set:  []string{"compaction.retain_ratio=0.8"},
			key:  "compaction.retain_ratio",
			want: `must be less than compaction.threshold_ratio (0.8, from default)`,
		},
		{
			name: "initial delay above max delay",
			set:  []string{"llm.retry.initial_delay_ms=20000"},
			key:  "llm.retry.initial_delay_ms",
			want: `must be at most llm.retry.max_delay_ms (10000, from default)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			o := w.opts()
			o.Set = tt.set
			if tt.file != "" {
				w.projectFile(tt.file)
				w.trustProject()
			}
			err := w.loadErr(o)
			configError(t, err, tt.key)
			wantContains(t, err, tt.want)
		})
	}
}

func TestHomeCannotBeSetInFilesFoundThroughHome(t *testing.T) {
	w := newWorld(t)
	path := w.userFile("home: /elsewhere\n")
	err := w.loadErr(w.opts())
	ce := configError(t, err, "home")
	if ce.Source != path {
		t.Errorf("source = %q, want %q", ce.Source, path)
	}
	wantContains(t, err, "set DSH_HOME, --home or the project file instead")

	w2 := newWorld(t)
	w2.homeProfile("p", "home: /elsewhere\n")
	o := w2.opts()
	o.Profile = "p"
	configError(t, w2.loadErr(o), "home")
}

func TestAllProblemsAreReportedTogether(t *testing.T) {
	w := newWorld(t)
	w.projectFile("llm: {modle: x}\npermissions: {mode: yolo}\n")
	o := w.opts()
	o.Set = []string{"tui.color=maybe"}
	err := w.loadErr(o)
	for _, key := range []string{"llm.modle", "permissions.mode", "tui.color"} {
		configError(t, err, key)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatal("errors.As(*Error) failed on the joined error")
	}
}

func TestErrorMessages(t *testing.T) {
	src := filepath.Join("p", ".dsh", "config.yaml")
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Key: "llm.modle", Source: src, Unknown: true, Hint: "llm.model"},
			`unknown config key "llm.modle" in ` + src + ` (did you mean "llm.model"?)`},
		{&Error{Key: "xyz", Source: src, Unknown: true}, `unknown config key "xyz" in ` + src},
		{&Error{Key: "tui.color", Source: "environment variable DSH_TUI_COLOR", Problem: "must be true or false"},
			`config key "tui.color" in environment variable DSH_TUI_COLOR must be true or false`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
