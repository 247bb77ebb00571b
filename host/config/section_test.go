package config_test

import (
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	"github.com/seed-e9b4dba4/dsh/plugins/spill"

	"github.com/seed-e9b4dba4/dsh/host"
)

func TestSectionDecodesPluginSubtree(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	o.Profile = "session-query"
	o.Set = []string{"plugins.spill.max_inline_bytes=800"}
	c := w.load(o)

	var got spill.Config
	if err := c.Section("plugins.spill").Decode(&got); err != nil {
		t.Fatal(err)
	}
	if want := (spill.Config{Enabled: true, MaxInlineBytes: 800, KeepDays: 7, KeepTotalBytes: 1 << 30}); got != want {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}

func TestSectionDecodesNestedSections(t *testing.T) {
	w := newWorld(t)
	c := w.load(w.opts())
	var tools codingtools.Config
	if err := c.Section("tools").Decode(&tools); err != nil {
		t.Fatal(err)
	}
	if tools.Bash.MaxTimeoutMs != 600000 || tools.Bash.SavedOutput.MaxBytes != 100<<20 || tools.Read.DefaultLimit != 2000 || tools.Search.MaxResults != 200 {
		t.Errorf("decoded %+v", tools)
	}
}

func TestSectionDecodeIsStrict(t *testing.T) {
	w := newWorld(t)
	c := w.load(w.opts())
	tests := []struct {
		name, path string
		out        any
		want       string
	}{
		{"struct misses a key", "plugins.spill", &struct {
			Enabled bool `mapstructure:"enabled"`
		}{}, "invalid keys: keep_days, keep_total_bytes, max_inline_bytes, root"},
		{"wrong field type", "plugins.timeout", &struct {
			Enabled string `mapstructure:"enabled"`
		}{}, "enabled"},
		{"unknown section", "plugins.nope", &spill.Config{}, `unknown config section "plugins.nope"`},
		{"leaf path", "plugins.spill.root", &spill.Config{}, `config key "plugins.spill.root" is a value, not a section`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Section(tt.path).Decode(tt.out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestConfigIsAHostConfigSource starts a real plugin host with the loaded
// config and checks that the plugin sees its own section.
func TestConfigIsAHostConfigSource(t *testing.T) {
	w := newWorld(t)
	o := w.opts()
	o.Set = []string{"plugins.spill.root=/srv/spill"}
	c := w.load(o)

	var seen spill.Config
	h := host.New(nil)
	err := h.Start([]host.Plugin{{
		Name:    "spill",
		Section: "plugins.spill",
		Apply: func(_ *host.Host, cfg host.Section) (host.Dispose, error) {
			return nil, cfg.Decode(&seen)
		},
	}}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if seen.Root != "/srv/spill" || seen.MaxInlineBytes != 50000 {
		t.Errorf("plugin saw %+v", seen)
	}
}
