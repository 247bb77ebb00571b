package permissions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

// loadWith loads the config with the permissions section, a user file
// holding user and a project file holding project (none when empty), and the
// --set flags.
func loadWith(t *testing.T, user, project string, sets ...string) (*config.Config, error) {
	t.Helper()
	dir := t.TempDir()
	cwd := filepath.Join(dir, "project")
	for path, content := range map[string]string{
		filepath.Join(dir, "home", "config.yaml"): user, filepath.Join(cwd, ".dsh", "config.yaml"): project,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if content == "" {
			continue
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return config.Load(config.Options{Home: filepath.Join(dir, "home"), Cwd: cwd, Set: sets,
		Env: func(string) (string, bool) { return "", false }, Sections: []config.Schema{ConfigSchema}})
}

func TestConfigSchemaAcceptsExactlyTheModes(t *testing.T) {
	for _, m := range Modes() {
		c, err := loadWith(t, "", "", "permissions.mode="+string(m))
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if got := c.Value("permissions.mode"); got != string(m) {
			t.Errorf("mode = %v, want %s", got, m)
		}
	}
	_, err := loadWith(t, "", "", "permissions.mode=yolo")
	want := `config key "permissions.mode" in flag --set permissions.mode=yolo must be one of "default", "accept-edits", "auto", "read-only", "bypass" (got "yolo")`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestUntrustedProjectMayOnlyNarrowTheMode pins ConfigSchema.Stricter: an
// untrusted repository can make dsh stricter than the layers below, never
// more permissive.
func TestUntrustedProjectMayOnlyNarrowTheMode(t *testing.T) {
	cases := []struct {
		below, project, want string
		ignored              bool
	}{
		{"default", "read-only", "read-only", false},
		{"default", "default", "default", false},
		{"default", "accept-edits", "default", true},
		{"accept-edits", "auto", "accept-edits", true},
		{"auto", "accept-edits", "accept-edits", false},
		{"bypass", "auto", "auto", false},
		{"read-only", "bypass", "read-only", true},
	}
	for _, tc := range cases {
		c, err := loadWith(t, "permissions: {mode: "+tc.below+"}\n", "permissions: {mode: "+tc.project+"}\n")
		if err != nil {
			t.Fatal(err)
		}
		ignored := slices.Contains(c.Project().Ignored, "permissions.mode")
		if got := c.Value("permissions.mode"); got != tc.want || ignored != tc.ignored {
			t.Errorf("user %s, project %s: mode %v (ignored %v), want %s (ignored %v)", tc.below, tc.project, got, ignored, tc.want, tc.ignored)
		}
	}
}
