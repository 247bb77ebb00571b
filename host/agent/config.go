package agent

import (
	"reflect"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

// The agent's config sections are declared here once (struct, rules, which
// keys an untrusted project may set); configs/default.yaml holds their
// defaults and docs, and compositions registers them with host/config.
const (
	SectionPath    = "agent"
	CompactionPath = "compaction"
)

// Config is the agent section.
type Config struct {
	// MaxParallelToolCalls bounds the parallel-safe tool calls of one step
	// that run at once (Options.MaxParallelToolCalls).
	MaxParallelToolCalls int `mapstructure:"max_parallel_tool_calls"`
	// Persona is the system prompt's persona section; the composition that
	// assembles the prompt adds it.
	Persona string `mapstructure:"persona"`
	// InstructionsMaxBytes caps the workspace instructions message
	// (Options.InstructionsMaxBytes).
	InstructionsMaxBytes int `mapstructure:"instructions_max_bytes"`
}

// ConfigSchema declares the agent section. Its keys shape how this agent
// works, not what it may touch, so an untrusted project may set them.
var ConfigSchema = config.Schema{
	Path: SectionPath,
	Type: reflect.TypeFor[Config](),
	Rules: map[string]config.Rule{
		"max_parallel_tool_calls": config.IntAtLeast(1),
		"instructions_max_bytes":  config.IntAtLeast(1),
	},
	Safe: []string{"max_parallel_tool_calls", "persona", "instructions_max_bytes"},
}

// CompactionSchema declares the compaction section (CompactionConfig): both
// ratios are fractions of (0, 1], the conversation kept verbatim is less
// than the share that triggers compaction, and an untrusted project may set
// every key.
var CompactionSchema = config.Schema{
	Path: CompactionPath,
	Type: reflect.TypeFor[CompactionConfig](),
	Rules: map[string]config.Rule{
		"threshold_ratio":    config.FloatIn(0, 1, false),
		"retain_ratio":       config.FloatIn(0, 1, false),
		"max_summary_tokens": config.IntAtLeast(1),
	},
	Pairs: []config.Pair{{Low: "retain_ratio", High: "threshold_ratio", Strict: true}},
	Safe:  []string{"enabled", "threshold_ratio", "retain_ratio", "max_summary_tokens"},
}

// defaults are the two sections' values in configs/default.yaml, which
// Options' zero fields take. The package's tests rule out the panic.
func defaults() (Config, CompactionConfig) {
	var (
		c    Config
		comp CompactionConfig
	)
	if err := ConfigSchema.DecodeDefaults(&c); err != nil {
		panic(err)
	}
	if err := CompactionSchema.DecodeDefaults(&comp); err != nil {
		panic(err)
	}
	return c, comp
}
