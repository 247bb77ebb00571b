package mcp

import "github.com/seed-e9b4dba4/dsh/host/config"

// SectionPath is the mcp config section. Its servers (mcp.servers, entries
// in the shape of the common mcpServers JSON) are read by host/config
// itself (config.Config.MCPServers), since a Schema has no map keys; the
// section's other keys are this package's and are declared here once.
const SectionPath = "mcp"

// Config is the mcp section without its servers; the composition turns it
// into Options.
type Config struct {
	// StartTimeoutMs is Options.StartTimeout.
	StartTimeoutMs int `mapstructure:"start_timeout_ms"`
	// CallTimeoutMs is Options.CallTimeout.
	CallTimeoutMs int `mapstructure:"call_timeout_ms"`
	// TrustReadOnlyHints is Options.TrustReadOnlyHints.
	TrustReadOnlyHints bool `mapstructure:"trust_read_only_hints"`
}

// ConfigSchema declares the mcp section's keys. None may come from an
// untrusted project: trusting read-only hints lets a server's tools run
// unasked, and servers are the user's to add.
var ConfigSchema = config.SchemaOf[Config](SectionPath, map[string]config.Rule{
	"start_timeout_ms": config.IntIn(1, config.MaxTimerMs),
	"call_timeout_ms":  config.IntIn(1, config.MaxTimerMs),
})
