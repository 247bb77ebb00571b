package config

import "reflect"

// Config is the effective configuration. Its fields are the loader's own
// keys (the mapstructure tags are the key names); the sections other
// packages register (Schema) are read with Get or Section. Home and
// Sessions.Dir are absolute, and so is every other non-empty path but a
// Schema's literal values (":memory:").
type Config struct {
	Home     string         `mapstructure:"home"`
	Sessions SessionsConfig `mapstructure:"sessions"`

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
