package tui

import (
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

func TestConfigSchemaDecodesTheDefaultsAndChecksThePreviewHeight(t *testing.T) {
	dir := t.TempDir()
	load := func(sets ...string) (*config.Config, error) {
		return config.Load(config.Options{Home: dir, Cwd: dir, Set: sets,
			Env: func(string) (string, bool) { return "", false }, Sections: []config.Schema{ConfigSchema}})
	}
	cfg, err := load("tui.mouse=false")
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	if err := cfg.Section(SectionPath).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if want := (Config{ShowReasoning: true, MaxToolOutputLines: 6, Color: true, Mouse: false}); c != want {
		t.Errorf("decoded %+v, want %+v", c, want)
	}
	_, err = load("tui.max_tool_output_lines=0")
	if want := `config key "tui.max_tool_output_lines" in flag --set tui.max_tool_output_lines=0 must be a positive integer (got 0)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}
