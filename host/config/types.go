package config

import "reflect"

// Config is the effective configuration. Its field is the loader's own key
// (the mapstructure tag is the key name); the sections other packages
// register (Schema) are read with Get or Section. Home is absolute, and so
// is every other non-empty path but a Schema's literal values (":memory:").
type Config struct {
	Home string `mapstructure:"home"`

	// The untagged fields are skipped by decoding. tree is the key tree
	// Load used (nil means the built-in one); owned holds a pointer to
	// each registered section's struct, by section path.
	meta       *meta
	mcpServers map[string]MCPServer
	tree       *schema
	owned      map[string]reflect.Value
}
