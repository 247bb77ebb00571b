package compositions

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/llm/openai"
	"github.com/seed-e9b4dba4/dsh/host/llm/replay"
)

// newProvider builds the configured model provider. A key from a file or a
// command is read here, once; the environment variable is read per request,
// so a missing key is reported at the first prompt, not here.
func newProvider(ctx context.Context, c LLMConfig, version string, env func(string) (string, bool)) (llm.Provider, error) {
	switch c.Provider {
	case "replay":
		if c.Replay.Fixture == "" {
			return nil, fmt.Errorf("llm.provider replay needs llm.replay.fixture (a recorded session.jsonl or scenario directory)")
		}
		return replay.New(replay.Config{
			Name:     c.Replay.ProviderName,
			Fixtures: []string{c.Replay.Fixture},
			Override: c.Replay.Override,
		})
	case "demo":
		return newDemoProvider(), nil
	case "deepseek", "openai":
		key, err := apiKey(ctx, c)
		if err != nil {
			return nil, err
		}
		return openai.New(openai.Config{
			Name:              c.Provider,
			BaseURL:           c.BaseURL,
			APIKey:            key,
			APIKeyEnv:         keyEnv(c),
			Env:               env,
			ReasoningEffort:   c.ReasoningEffort,
			MaxTokens:         c.MaxTokens,
			StreamIdleTimeout: time.Duration(c.StreamIdleTimeoutMs) * time.Millisecond,
			RequestTimeout:    time.Duration(c.RequestTimeoutMs) * time.Millisecond,
			KeepAliveLimit:    time.Duration(c.KeepAliveLimitMs) * time.Millisecond,
			Version:           version,
		})
	default:
		return nil, fmt.Errorf("llm.provider %q is not supported (use deepseek, openai, replay or demo)", c.Provider)
	}
}

// keyEnv is the environment variable the configured provider reads its API
// key from when no key, key file or key command is set; "" for providers
// that need no key. The shipped default of llm.api_key_env names
// DeepSeek's variable, so the openai provider then reads OPENAI_API_KEY.
func keyEnv(c LLMConfig) string {
	switch c.Provider {
	case "deepseek":
		if c.APIKeyEnv == "" {
			return "DEEPSEEK_API_KEY"
		}
		return c.APIKeyEnv
	case "openai":
		if c.APIKeyEnv == "" || c.APIKeyEnv == "DEEPSEEK_API_KEY" {
			return "OPENAI_API_KEY"
		}
		return c.APIKeyEnv
	}
	return ""
}

// CheckCredential reports a provider that cannot send any request because
// its key is missing or unusable (a typed *llm.Error), or nil. Providers
// without credentials (demo, replay) always pass. Front ends call it before
// they create a session, so a missing key never leaves an empty session.
func (r *Runtime) CheckCredential() error {
	c, ok := r.Provider.(interface{ CheckCredential() error })
	if !ok {
		return nil
	}
	return c.CheckCredential()
}
