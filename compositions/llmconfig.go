package compositions

import (
	"fmt"
	"net/url"
	"reflect"

	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
	"github.com/seed-e9b4dba4/dsh/host/llm"
)

// LLMPath is the llm config section: which provider serves the model and
// how its key is found. The composition interprets it (newProvider,
// apiKey), so it declares it here once.
const LLMPath = "llm"

// LLMConfig is the llm section.
type LLMConfig struct {
	Provider            string          `mapstructure:"provider"`
	BaseURL             string          `mapstructure:"base_url"`
	Model               string          `mapstructure:"model"`
	APIKey              string          `mapstructure:"api_key"`
	APIKeyEnv           string          `mapstructure:"api_key_env"`
	APIKeyFile          string          `mapstructure:"api_key_file"`
	APIKeyCommand       string          `mapstructure:"api_key_command"`
	ReasoningEffort     string          `mapstructure:"reasoning_effort"`
	MaxTokens           int             `mapstructure:"max_tokens"`
	StreamIdleTimeoutMs int             `mapstructure:"stream_idle_timeout_ms"`
	RequestTimeoutMs    int             `mapstructure:"request_timeout_ms"`
	KeepAliveLimitMs    int             `mapstructure:"keepalive_limit_ms"`
	Retry               llm.RetryConfig `mapstructure:"retry"`
	Replay              ReplayConfig    `mapstructure:"replay"`
}

// ReplayConfig is llm.replay.
type ReplayConfig struct {
	Fixture      string `mapstructure:"fixture"`
	Override     string `mapstructure:"override"`
	ProviderName string `mapstructure:"provider_name"`
}

// Providers are the llm.provider values newProvider builds.
var providers = []string{"deepseek", "openai", "replay", "demo"}

// LLMSchema declares the llm section. An untrusted project may pick the
// model and tune requests and retries; it may not choose the provider, the
// endpoint, the key or where the key is read from, nor the replayed files,
// since any of those sends the user's conversation (or key) elsewhere or
// reads the user's files. api_key is a secret: config show masks it, and a
// flag carrying it is warned about. config show also says which variable
// the provider reads the key from and when the default model does not fit
// the provider (explainKeyEnv, explainModel).
var LLMSchema = config.Schema{
	Path: LLMPath,
	Type: reflect.TypeFor[LLMConfig](),
	Rules: map[string]config.Rule{
		"provider":               config.OneOf(providers...),
		"base_url":               httpURL,
		"model":                  nonEmpty,
		"api_key_env":            envVarName,
		"reasoning_effort":       config.OneOf("", "off", "low", "high", "max"),
		"max_tokens":             config.IntAtLeast(0),
		"stream_idle_timeout_ms": config.IntAtLeast(1),
		"request_timeout_ms":     config.IntAtLeast(0),
		"keepalive_limit_ms":     config.IntAtLeast(0),
		"retry.max_retries":      config.IntAtLeast(0),
		"retry.initial_delay_ms": config.IntAtLeast(1),
		"retry.max_delay_ms":     config.IntAtLeast(1),
		"retry.jitter":           config.FloatIn(0, 1, true),
		"replay.provider_name":   nonEmpty,
	},
	Paths: []string{"api_key_file", "replay.fixture", "replay.override"},
	Pairs: []config.Pair{{Low: "retry.initial_delay_ms", High: "retry.max_delay_ms"}},
	Safe: []string{"model", "reasoning_effort", "max_tokens", "stream_idle_timeout_ms", "request_timeout_ms", "keepalive_limit_ms",
		"retry.max_retries", "retry.initial_delay_ms", "retry.max_delay_ms", "retry.jitter"},
	Secrets: map[string]string{
		"api_key": "use llm.api_key_file, llm.api_key_command or the variable llm.api_key_env names instead",
	},
	Explain: map[string]config.Explainer{"api_key_env": explainKeyEnv, "model": explainModel},
}

// explainKeyEnv shows the variable the provider reads, which for the
// openai provider is not the shipped default.
func explainKeyEnv(section any, _ bool) (any, string) {
	c := section.(LLMConfig)
	if env := keyEnv(c); env != "" && env != c.APIKeyEnv {
		return env, fmt.Sprintf("%s for llm.provider %s", env, c.Provider)
	}
	return nil, ""
}

// explainModel warns that the default model is DeepSeek's, which an
// openai endpoint is unlikely to serve.
func explainModel(section any, isDefault bool) (any, string) {
	if section.(LLMConfig).Provider == "openai" && isDefault {
		return nil, "DeepSeek's model: set llm.model to one your endpoint serves"
	}
	return nil, ""
}

func nonEmpty(v any) string {
	if v.(string) == "" {
		return "must not be empty"
	}
	return ""
}

func httpURL(v any) string {
	s := v.(string)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("must be an http or https URL such as https://api.deepseek.com (got %q)", s)
	}
	return ""
}

var envVarPattern = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

func envVarName(v any) string {
	s := v.(string)
	if s == "" || envVarPattern.MatchString(s) {
		return ""
	}
	return fmt.Sprintf("must be an environment variable name such as DEEPSEEK_API_KEY (got %q)", s)
}
