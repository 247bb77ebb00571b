package codingtools

import (
	"strings"
	"testing"
)

// TestBashDoesNotSeeDshCredentials runs env in a real bash: issue 13
// finding 6, where the key dsh reads (DEEPSEEK_API_KEY, DSH_LLM_API_KEY,
// or the variable llm.api_key_env names) was inherited by every command
// and printed by env into the session log, the index and the next model
// request.
func TestBashDoesNotSeeDshCredentials(t *testing.T) {
	secrets := map[string]string{
		"DEEPSEEK_API_KEY":  "sk-deepseek-secret",
		"DSH_LLM_API_KEY":   "sk-dsh-secret",
		"OPENAI_API_KEY":    "sk-openai-secret",
		"MY_CONFIGURED_KEY": "sk-configured-secret",
		"AWS_SECRET_KEY":    "aws-denied-secret",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("DSH_ENV_TEST_VISIBLE", "still-here")
	ws := workspace(t)
	cfg := DefaultConfig()
	cfg.Bash.Env.Deny = "AWS_*"
	s, err := New(cfg, Options{HiddenEnv: []string{"MY_CONFIGURED_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	got := runBash(t, s, ws, "env; cat /proc/$$/environ | tr '\\0' '\\n'", nil)
	for k, v := range secrets {
		if strings.Contains(got, v) || strings.Contains(got, k+"=") {
			t.Errorf("bash sees %s:\n%s", k, got)
		}
	}
	if !strings.Contains(got, "DSH_ENV_TEST_VISIBLE=still-here") || !strings.Contains(got, "PATH=") {
		t.Errorf("ordinary variables were removed too:\n%s", got)
	}
}

func TestBashEnvAllowListKeepsOnlyListedVariables(t *testing.T) {
	t.Setenv("DSH_ENV_TEST_A", "a")
	t.Setenv("DSH_ENV_TEST_B", "b")
	t.Setenv("DEEPSEEK_API_KEY", "sk-secret")
	s := testSet(t, func(c *Config) { c.Bash.Env.Allow = "PATH, DSH_ENV_TEST_A DEEPSEEK_*" })
	got := runBash(t, s, workspace(t), "env", nil)
	if !strings.Contains(got, "DSH_ENV_TEST_A=a") || !strings.Contains(got, "PATH=") {
		t.Errorf("allowed variables missing:\n%s", got)
	}
	if strings.Contains(got, "DSH_ENV_TEST_B") || strings.Contains(got, "sk-secret") {
		t.Errorf("variables outside the allow list, or the key, reached bash:\n%s", got)
	}
}

func TestBadEnvPatternIsAConfigError(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Bash.Env.Deny = "AWS_[*"
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "tools.bash.env.deny") {
		t.Errorf("New = %v, want an error naming tools.bash.env.deny", err)
	}
}
