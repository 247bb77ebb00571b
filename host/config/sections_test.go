package config

import (
	"reflect"
	"slices"
)

// The sections configs/default.yaml carries for other packages, declared
// here the way their owners declare them (host/permissions, host/sandbox,
// host/codingtools, host/tui, plugins/spill, plugins/timeout, plugins/sessionquery),
// so that this package's tests load the whole shipped key tree without
// importing its owners (which import this package). Only the rules these
// tests exercise are repeated; the compositions tests check the real
// declarations against configs/default.yaml, and each owner tests its own.
type testPermissionsSection struct {
	Mode string `mapstructure:"mode"`
}

type testSandboxSection struct {
	Network  bool   `mapstructure:"network"`
	Write    string `mapstructure:"write"`
	DenyRead string `mapstructure:"deny_read"`
}

type testToolsSection struct {
	MaxFileBytes int `mapstructure:"max_file_bytes"`
	Bash         struct {
		DefaultTimeoutMs int `mapstructure:"default_timeout_ms"`
		MaxTimeoutMs     int `mapstructure:"max_timeout_ms"`
		MaxOutputBytes   int `mapstructure:"max_output_bytes"`
		SavedOutput      struct {
			MaxBytes       int `mapstructure:"max_bytes"`
			KeepDays       int `mapstructure:"keep_days"`
			KeepTotalBytes int `mapstructure:"keep_total_bytes"`
		} `mapstructure:"saved_output"`
		Env struct {
			Allow string `mapstructure:"allow"`
			Deny  string `mapstructure:"deny"`
		} `mapstructure:"env"`
	} `mapstructure:"bash"`
	Read struct {
		DefaultLimit int `mapstructure:"default_limit"`
	} `mapstructure:"read"`
	Search struct {
		MaxResults int `mapstructure:"max_results"`
		TimeoutMs  int `mapstructure:"timeout_ms"`
	} `mapstructure:"search"`
}

type testTUISection struct {
	ShowReasoning      bool `mapstructure:"show_reasoning"`
	MaxToolOutputLines int  `mapstructure:"max_tool_output_lines"`
	Color              bool `mapstructure:"color"`
	Mouse              bool `mapstructure:"mouse"`
}

// testModes are the permission modes, most permissive first.
var testModes = []string{"bypass", "auto", "accept-edits", "default", "read-only"}

type testSpillSection struct {
	Enabled        bool   `mapstructure:"enabled"`
	MaxInlineBytes int    `mapstructure:"max_inline_bytes"`
	Root           string `mapstructure:"root"`
	KeepDays       int    `mapstructure:"keep_days"`
	KeepTotalBytes int    `mapstructure:"keep_total_bytes"`
}

type testTimeoutSection struct {
	Enabled bool `mapstructure:"enabled"`
}

type testSessionQuerySection struct {
	Enabled          bool `mapstructure:"enabled"`
	MaxSearchResults int  `mapstructure:"max_search_results"`
	SearchTimeoutMs  int  `mapstructure:"search_timeout_ms"`
}

var testSections = []Schema{
	{
		Path:  "permissions",
		Type:  reflect.TypeFor[testPermissionsSection](),
		Rules: map[string]Rule{"mode": OneOf("default", "accept-edits", "auto", "read-only", "bypass")},
		Stricter: map[string]func(below, project any) bool{"mode": func(below, project any) bool {
			return slices.Index(testModes, project.(string)) >= slices.Index(testModes, below.(string))
		}},
	},
	SchemaOf[testSandboxSection]("sandbox", nil),
	SchemaOf[testTUISection]("tui", nil),
	{
		Path:  "tools",
		Type:  reflect.TypeFor[testToolsSection](),
		Rules: map[string]Rule{"bash.max_timeout_ms": IntAtLeast(1)},
		Pairs: []Pair{{Low: "bash.default_timeout_ms", High: "bash.max_timeout_ms"}},
	},
	SchemaOf[testSessionQuerySection]("plugins.session_query", map[string]Rule{
		"max_search_results": IntIn(1, MaxSafeInteger),
		"search_timeout_ms":  IntIn(1, MaxTimerMs),
	}),
	SchemaOf[testTimeoutSection]("plugins.timeout", nil),
	SchemaOf[testSpillSection]("plugins.spill", map[string]Rule{
		"max_inline_bytes": IntAtLeast(0),
		"keep_days":        IntAtLeast(1),
		"keep_total_bytes": IntAtLeast(1),
	}, "root"),
}

// testTree is the key tree of a Load with testSections.
var testTree = func() *schema {
	s, err := withSections(testSections)
	if err != nil {
		panic(err)
	}
	return s
}()
