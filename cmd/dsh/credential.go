package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/llm"
)

// credentialProblem turns a provider's missing or unusable API key into the
// one line a user reads before any session exists: the variable to set, the
// file that can hold the key instead, and the demo profile that needs none.
// ok is false for any other error.
func credentialProblem(cfg *config.Config, err error) (msg string, ok bool) {
	var le *llm.Error
	if !errors.As(err, &le) {
		return "", false
	}
	switch le.Code {
	case llm.CodeMissingCredential:
		return fmt.Sprintf("%s: export it, or set llm.api_key_file (a file holding the key) in %s; to try dsh without a key, add --profile demo (%s)",
			le.Message, filepath.Join(cfg.Home, "config.yaml"), le.Code), true
	case llm.CodeInvalidCredential:
		return fmt.Sprintf("%s (%s)", le.Message, le.Code), true
	}
	return "", false
}
