package openai

import (
	"github.com/seed-e9b4dba4/dsh/host/llm"
)

// apiKey resolves the key for one request: the configured literal, else the
// environment variable named by APIKeyEnv. It is read per request so a key
// exported after start-up is picked up without a restart.
func (p *Provider) apiKey() (string, error) {
	key, source := p.cfg.APIKey, "llm.api_key"
	if key == "" {
		v, _ := p.cfg.Env(p.cfg.APIKeyEnv)
		key, source = v, p.cfg.APIKeyEnv
	}
	if key == "" {
		return "", llm.Failf(llm.CodeMissingCredential,
			"set %s (or llm.api_key) to use the %s provider", p.cfg.APIKeyEnv, p.cfg.Name)
	}
	if !headerSafe(key) {
		return "", llm.Failf(llm.CodeInvalidCredential,
			"the API key in %s contains whitespace, control or non-ASCII characters and cannot be sent; check its value", source)
	}
	return key, nil
}

// headerSafe reports whether key can follow "Bearer " in a header value
// unchanged. API keys are printable ASCII without spaces; anything else is a
// paste error (a trailing newline, a smart quote) better reported than sent.
func headerSafe(key string) bool {
	for i := range len(key) {
		if c := key[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// CheckCredential reports, without a request, the failure the first request
// would meet for want of a usable key (MISSING_CREDENTIAL or
// INVALID_CREDENTIAL), so a front end can say so before it creates a session.
func (p *Provider) CheckCredential() error {
	_, err := p.apiKey()
	return err
}
