package config

import "reflect"

// Config is the effective configuration. Its fields are the built-in
// sections of the key tree (the mapstructure tags are the key names); the
// sections other packages register (Schema) are read with Section. The
// derived paths Home, Sessions.Dir and SessionQuery.Path are absolute (except
// SessionQuery.Path ":memory:"), and every other non-empty path is absolute.
type Config struct {
	Home         string             `mapstructure:"home"`
	Sessions     SessionsConfig     `mapstructure:"sessions"`
	SessionQuery SessionQueryConfig `mapstructure:"session_query"`

	// The untagged fields are skipped by decoding. tree is the key tree
	// Load used (nil means the built-in one); owned holds a pointer to
	// each registered section's struct, by section path.
	meta       *meta
	mcpServers map[string]MCPServer
	tree       *schema
	owned      map[string]reflect.Value
}

// SessionsConfig is the sessions section.
type SessionsConfig struct {
	Dir string `mapstructure:"dir"`
}

// SessionQueryConfig is the session_query section (the trusted service and
// its SQLite index).
type SessionQueryConfig struct {
	Path                        string `mapstructure:"path"`
	OpenAt                      string `mapstructure:"open_at"`
	JournalMode                 string `mapstructure:"journal_mode"`
	ReadWindowMax               int    `mapstructure:"read_window_max"`
	PersistedInspectConcurrency int    `mapstructure:"persisted_inspect_concurrency"`
	DefaultLimit                int    `mapstructure:"default_limit"`
	MaxLimit                    int    `mapstructure:"max_limit"`
	SnippetChars                int    `mapstructure:"snippet_chars"`
}
