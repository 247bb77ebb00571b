package compositions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAPIKeyFromFileOrCommand(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("  sk-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     LLMConfig
		want    string
		wantErr string
	}{
		{"none leaves the variable", LLMConfig{}, "", ""},
		{"literal wins", LLMConfig{APIKey: "sk-literal", APIKeyFile: keyFile, APIKeyCommand: "echo no"}, "sk-literal", ""},
		{"file, trimmed", LLMConfig{APIKeyFile: keyFile, APIKeyCommand: "echo no"}, "sk-from-file", ""},
		{"command, trimmed", LLMConfig{APIKeyCommand: "printf ' sk-from-command\\n'"}, "sk-from-command", ""},
		{"missing file", LLMConfig{APIKeyFile: filepath.Join(dir, "missing")}, "", "llm.api_key_file"},
		{"empty file", LLMConfig{APIKeyFile: empty}, "", "is empty"},
		{"failing command", LLMConfig{APIKeyCommand: "echo locked >&2; exit 3"}, "", "llm.api_key_command failed (exit status 3): locked"},
		{"two lines", LLMConfig{APIKeyCommand: "echo a; echo b"}, "", "several lines"},
		{"runaway output", LLMConfig{APIKeyCommand: "head -c 200000 /dev/zero | tr '\\0' a"}, "", "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := apiKey(context.Background(), tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("apiKey = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("apiKey = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
