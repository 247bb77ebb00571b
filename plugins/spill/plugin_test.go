package spill

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-viper/mapstructure/v2"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// jsonSection decodes a JSON object strictly by the mapstructure tags, as
// the real config's sections do.
type jsonSection string

func (s jsonSection) Decode(out any) error {
	if s == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(s)))
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		return err
	}
	md, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: out, ErrorUnused: true})
	if err != nil {
		return err
	}
	return md.Decode(tree)
}

type sections map[string]string

func (m sections) Section(path string) host.Section { return jsonSection(m[path]) }

// startPlugin mounts the plugin with section as plugins.spill on a host
// providing reg (nil: no tools service).
func startPlugin(t *testing.T, reg *tools.Registry, section string, logs *bytes.Buffer) (*host.Host, error) {
	t.Helper()
	var log *slog.Logger
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	h := host.New(log)
	if reg != nil {
		if _, err := host.Provide(h, tools.ServiceKey, "", reg); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = h.Close() })
	return h, h.Start([]host.Plugin{Plugin()}, sections{"plugins.spill": section})
}

func TestPluginStartsOverTheDefaults(t *testing.T) {
	cases := []struct {
		section string
		err     string // empty: starts
		chained int    // post-execute middlewares registered
	}{
		{`{"enabled":true,"max_inline_bytes":50000,"root":""}`, "", 1},
		{`{"enabled":true,"max_inline_bytes":0}`, "", 1},
		{`{"enabled":true}`, "", 1},
		{``, "", 1},
		{`{"max_inline_bytes":10,"max_bytes":5}`, "invalid keys: max_bytes", 0},
	}
	for _, tc := range cases {
		t.Run(tc.section, func(t *testing.T) {
			reg := tools.NewRegistry(nil)
			_, err := startPlugin(t, reg, tc.section, nil)
			if tc.err == "" && err != nil {
				t.Fatalf("Start: %v", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "plugin spill-policy: ")) {
				t.Fatalf("Start error = %v, want %q", err, tc.err)
			}
			if got := reg.PostExecute.Len(); got != tc.chained {
				t.Errorf("%d post-execute middlewares, want %d", got, tc.chained)
			}
		})
	}
}

// TestConfigRejectsABadCap pins what the design's "maxInlineBytes must be a
// non-negative integer" became: the loader, holding ConfigSchema, rejects a
// negative, fractional or non-numeric cap and names the key.
func TestConfigRejectsABadCap(t *testing.T) {
	cases := map[string]string{
		"-1":   "must be an integer of at least 0 (got -1)",
		"1.5":  `must be an integer (got "1.5")`,
		"big":  `must be an integer (got "big")`,
		"true": `must be an integer (got "true")`,
	}
	for value, want := range cases {
		dir := t.TempDir()
		_, err := config.Load(config.Options{Home: dir, Cwd: dir, Env: func(string) (string, bool) { return "", false },
			Set: []string{"plugins.spill.max_inline_bytes=" + value}, Sections: []config.Schema{ConfigSchema}})
		if err == nil || !strings.Contains(err.Error(), `config key "plugins.spill.max_inline_bytes"`) || !strings.Contains(err.Error(), want) {
			t.Errorf("max_inline_bytes=%s: err = %v, want %q", value, err, want)
		}
	}
}

func TestPluginNeedsTheToolsService(t *testing.T) {
	_, err := startPlugin(t, nil, `{"max_inline_bytes":10}`, nil)
	if err == nil || !strings.Contains(err.Error(), `plugin spill-policy requires service "tools"`) {
		t.Fatalf("Start error = %v", err)
	}
}

func TestPluginSpillsToTheConfiguredRootAndDisposeRemovesIt(t *testing.T) {
	root := t.TempDir()
	reg := tools.NewRegistry(nil)
	big := strings.Repeat("line of output\n", 100)
	if _, err := reg.Register(&tools.Definition{
		Name: "big", Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { return big, nil },
	}); err != nil {
		t.Fatal(err)
	}
	h := host.New(nil)
	if _, err := host.Provide(h, tools.ServiceKey, "", reg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	section := `{"enabled":true,"max_inline_bytes":400,"root":` + jsonString(root) + `}`
	if err := h.Start([]host.Plugin{PluginWith(Options{Random: fixedNonce()})}, sections{"plugins.spill": section}); err != nil {
		t.Fatal(err)
	}
	live := session.NewLive(session.Header{ID: "s-9"}, nil, session.LiveOptions{})
	res := reg.Run(context.Background(), &tools.Call{CallID: "c", Name: "big", Session: live})
	got := session.JoinText(res.Content)
	ref := Ref{Locator: locatorIn(t, got), RetrievalHint: RetrievalHint}
	if want := filepath.Join(sessionDir(root, "s-9"), nonceHex+"-big.txt"); ref.Locator != want {
		t.Errorf("locator %s, want %s (named from the injected nonce source)", ref.Locator, want)
	}
	if saved, _ := os.ReadFile(ref.Locator); string(saved) != big {
		t.Errorf("spill file holds %d bytes, want the full %d", len(saved), len(big))
	}
	if want, _ := replacement(big, ref, 400); got != want || len(got) > 400 {
		t.Errorf("content = %q", got)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if reg.PostExecute.Len() != 0 {
		t.Error("dispose left the policy registered")
	}
}

func TestPluginLogsThroughTheHostLogger(t *testing.T) {
	var logs bytes.Buffer
	reg := tools.NewRegistry(nil)
	if _, err := reg.Register(&tools.Definition{
		Name: "big", Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { return strings.Repeat("q", 50), nil },
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := startPlugin(t, reg, `{"max_inline_bytes":10,"root":`+jsonString(t.TempDir())+`}`, &logs); err != nil {
		t.Fatal(err)
	}
	res := reg.Run(context.Background(), &tools.Call{Name: "big"}) // no session
	if session.JoinText(res.Content) != strings.Repeat("q", 50) {
		t.Error("result changed")
	}
	if !strings.Contains(logs.String(), "plugin=spill-policy") || !strings.Contains(logs.String(), "no session") {
		t.Errorf("logs = %q", logs.String())
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// locatorIn extracts the spill path from a replacement's notice.
func locatorIn(t *testing.T, content string) string {
	t.Helper()
	_, after, ok := strings.Cut(content, "Full formatted result stored at: ")
	if !ok {
		t.Fatalf("no notice in %q", content)
	}
	loc, _, ok := strings.Cut(after, ". Use read with offset/limit")
	if !ok {
		t.Fatalf("malformed notice in %q", content)
	}
	return loc
}

func TestPluginStartsFromTheRealSessionQueryProfile(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	cfg, err := config.Load(config.Options{
		Profile:  "session-query",
		Home:     dir,
		Cwd:      dir,
		Env:      func(string) (string, bool) { return "", false },
		Set:      []string{"plugins.spill.root=" + root, "plugins.spill.max_inline_bytes=900"},
		Sections: []config.Schema{ConfigSchema},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Value("plugins.spill.enabled") != true {
		t.Fatal("the session-query profile does not enable plugins.spill")
	}
	h := host.New(nil)
	reg := tools.NewRegistry(nil)
	if _, err := host.Provide(h, tools.ServiceKey, "", reg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if err := h.Start([]host.Plugin{Plugin()}, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(&tools.Definition{
		Name: "big", Output: tools.StringOutput,
		Execute: func(context.Context, *tools.Call) (any, error) { return strings.Repeat("b", 5000), nil },
	}); err != nil {
		t.Fatal(err)
	}
	live := session.NewLive(session.Header{ID: "p"}, nil, session.LiveOptions{})
	got := session.JoinText(reg.Run(context.Background(), &tools.Call{Name: "big", Session: live}).Content)
	if len(got) > 900 || filepath.Dir(locatorIn(t, got)) != sessionDir(root, "p") {
		t.Errorf("content (%d bytes) = %q", len(got), got)
	}
}
