package config

import "reflect"

// Config is the effective configuration. Its fields are the built-in
// sections of the key tree (the mapstructure tags are the key names); the
// sections other packages register (Schema) are read with Section. The
// derived paths Home, Sessions.Dir and SessionQuery.Path are absolute (except
// SessionQuery.Path ":memory:"), and every other non-empty path is absolute.
type Config struct {
	Home         string             `mapstructure:"home"`
	Log          LogConfig          `mapstructure:"log"`
	Sessions     SessionsConfig     `mapstructure:"sessions"`
	LLM          LLMConfig          `mapstructure:"llm"`
	Agent        AgentConfig        `mapstructure:"agent"`
	Permissions  PermissionsConfig  `mapstructure:"permissions"`
	Tools        ToolsConfig        `mapstructure:"tools"`
	Sandbox      SandboxConfig      `mapstructure:"sandbox"`
	SessionQuery SessionQueryConfig `mapstructure:"session_query"`
	TUI          TUIConfig          `mapstructure:"tui"`
	Compaction   CompactionConfig   `mapstructure:"compaction"`
	Runtime      RuntimeConfig      `mapstructure:"runtime"`
	MCP          MCPConfig          `mapstructure:"mcp"`

	// The untagged fields are skipped by decoding. tree is the key tree
	// Load used (nil means the built-in one); owned holds a pointer to
	// each registered section's struct, by section path.
	meta  *meta
	tree  *schema
	owned map[string]reflect.Value
}

// LogConfig is the log section.
type LogConfig struct {
	Level string `mapstructure:"level"`
	File  string `mapstructure:"file"`
}

// SessionsConfig is the sessions section.
type SessionsConfig struct {
	Dir string `mapstructure:"dir"`
}

// LLMConfig is the llm section.
type LLMConfig struct {
	Provider            string       `mapstructure:"provider"`
	BaseURL             string       `mapstructure:"base_url"`
	Model               string       `mapstructure:"model"`
	APIKey              string       `mapstructure:"api_key"`
	APIKeyEnv           string       `mapstructure:"api_key_env"`
	APIKeyFile          string       `mapstructure:"api_key_file"`
	APIKeyCommand       string       `mapstructure:"api_key_command"`
	ReasoningEffort     string       `mapstructure:"reasoning_effort"`
	MaxTokens           int          `mapstructure:"max_tokens"`
	StreamIdleTimeoutMs int          `mapstructure:"stream_idle_timeout_ms"`
	RequestTimeoutMs    int          `mapstructure:"request_timeout_ms"`
	KeepAliveLimitMs    int          `mapstructure:"keepalive_limit_ms"`
	Retry               RetryConfig  `mapstructure:"retry"`
	Replay              ReplayConfig `mapstructure:"replay"`
}

// RetryConfig is llm.retry.
type RetryConfig struct {
	MaxRetries     int     `mapstructure:"max_retries"`
	InitialDelayMs int     `mapstructure:"initial_delay_ms"`
	MaxDelayMs     int     `mapstructure:"max_delay_ms"`
	Jitter         float64 `mapstructure:"jitter"`
}

// ReplayConfig is llm.replay.
type ReplayConfig struct {
	Fixture      string `mapstructure:"fixture"`
	Override     string `mapstructure:"override"`
	ProviderName string `mapstructure:"provider_name"`
}

// AgentConfig is the agent section.
type AgentConfig struct {
	MaxParallelToolCalls int    `mapstructure:"max_parallel_tool_calls"`
	Persona              string `mapstructure:"persona"`
	InstructionsMaxBytes int    `mapstructure:"instructions_max_bytes"`
}

// PermissionsConfig is the permissions section.
type PermissionsConfig struct {
	Mode string `mapstructure:"mode"`
}

// SandboxConfig is the sandbox section: what commands may do in the
// sandbox of permission mode auto. The path lists are ":"-separated.
type SandboxConfig struct {
	Network  bool   `mapstructure:"network"`
	Write    string `mapstructure:"write"`
	DenyRead string `mapstructure:"deny_read"`
}

// ToolsConfig is the tools section.
type ToolsConfig struct {
	MaxFileBytes int          `mapstructure:"max_file_bytes"`
	Bash         BashConfig   `mapstructure:"bash"`
	Read         ReadConfig   `mapstructure:"read"`
	Search       SearchConfig `mapstructure:"search"`
}

// BashConfig is tools.bash.
type BashConfig struct {
	DefaultTimeoutMs int               `mapstructure:"default_timeout_ms"`
	MaxTimeoutMs     int               `mapstructure:"max_timeout_ms"`
	MaxOutputBytes   int               `mapstructure:"max_output_bytes"`
	SavedOutput      SavedOutputConfig `mapstructure:"saved_output"`
	Env              BashEnvConfig     `mapstructure:"env"`
}

// SavedOutputConfig is tools.bash.saved_output.
type SavedOutputConfig struct {
	MaxBytes       int `mapstructure:"max_bytes"`
	KeepDays       int `mapstructure:"keep_days"`
	KeepTotalBytes int `mapstructure:"keep_total_bytes"`
}

// BashEnvConfig is tools.bash.env.
type BashEnvConfig struct {
	Allow string `mapstructure:"allow"`
	Deny  string `mapstructure:"deny"`
}

// ReadConfig is tools.read.
type ReadConfig struct {
	DefaultLimit int `mapstructure:"default_limit"`
}

// SearchConfig is tools.search.
type SearchConfig struct {
	MaxResults int `mapstructure:"max_results"`
	TimeoutMs  int `mapstructure:"timeout_ms"`
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

// TUIConfig is the tui section.
type TUIConfig struct {
	ShowReasoning      bool `mapstructure:"show_reasoning"`
	MaxToolOutputLines int  `mapstructure:"max_tool_output_lines"`
	Color              bool `mapstructure:"color"`
	Mouse              bool `mapstructure:"mouse"`
}

// CompactionConfig is the compaction section.
type CompactionConfig struct {
	Enabled          bool    `mapstructure:"enabled"`
	ThresholdRatio   float64 `mapstructure:"threshold_ratio"`
	RetainRatio      float64 `mapstructure:"retain_ratio"`
	MaxSummaryTokens int     `mapstructure:"max_summary_tokens"`
}

// RuntimeConfig is the runtime section: determinism knobs for snapshot tests.
type RuntimeConfig struct {
	Clock       string `mapstructure:"clock"`
	FixedTimeMs int64  `mapstructure:"fixed_time_ms"`
	IDs         string `mapstructure:"ids"`
}
