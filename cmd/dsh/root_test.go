package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
)

func TestExitCodes(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, exitUsage, "the terminal UI needs a terminal"},
		{[]string{"tui"}, exitUsage, "for scripts run a task headless with dsh run"},
		{[]string{"--help"}, exitOK, ""},
		{[]string{"help", "config"}, exitOK, ""},
		{[]string{"version"}, exitOK, ""},
		{[]string{"config"}, exitOK, ""},
		{[]string{"config", "show"}, exitOK, ""},
		{[]string{"bogus"}, exitUsage, `dsh: unknown command "bogus" for "dsh"`},
		{[]string{"verison"}, exitUsage, `did you mean version`},
		{[]string{"config", "bogus"}, exitUsage, `unknown command "bogus" for "dsh config"`},
		{[]string{"--bogus"}, exitUsage, "unknown flag: --bogus"},
		{[]string{"config", "show", "--json=maybe"}, exitUsage, "invalid argument"},
		{[]string{"version", "extra"}, exitUsage, `dsh version takes no arguments, got "extra"`},
		{[]string{"--profile", "nope", "config", "show"}, exitError, `unknown profile "nope"`},
		{[]string{"config", "show", "--set", "llm.model"}, exitError, "must have the form key=value"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := newSandbox(t).run(tt.args...)
			if r.code != tt.code {
				t.Errorf("exit code = %d, want %d (stderr %q)", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", r.stderr, tt.stderr)
			}
			if tt.code == exitOK && r.stderr != "" {
				t.Errorf("stderr = %q, want nothing on success", r.stderr)
			}
		})
	}
}

func TestHelpFlagPrintsHelpOnStdout(t *testing.T) {
	r := newSandbox(t).run("--help")
	for _, want := range []string{"Usage:", "config", "version", "--profile", "--set"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestUsageErrorPointsAtHelp(t *testing.T) {
	r := newSandbox(t).run("config", "nope")
	if !strings.Contains(r.stderr, "Run 'dsh config --help' for usage.") {
		t.Errorf("stderr = %q", r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
}

// TestRunUsesProcessEnvironmentAndDirectory drives the real entry point, the
// way main does.
func TestRunUsesProcessEnvironmentAndDirectory(t *testing.T) {
	dir := t.TempDir()
	// Blank every DSH_* variable the machine may set; empty counts as unset.
	keys, err := config.Load(config.Options{Home: dir, Cwd: dir, Env: func(string) (string, bool) { return "", false }, Sections: compositions.ConfigSections()})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range keys.Keys() {
		t.Setenv(config.EnvName(key), "")
	}
	t.Chdir(dir)
	t.Setenv("HOME", dir)
	t.Setenv("DSH_HOME", filepath.Join(dir, "home"))
	t.Setenv("DSH_LLM_MODEL", "from-process-env")
	if err := os.MkdirAll(filepath.Join(dir, ".dsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".dsh", "config.yaml"), []byte("permissions: {mode: read-only}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"config", "show"}, bytes.NewReader(nil), &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit code %d, stderr %q", code, errOut.String())
	}
	for _, want := range []string{`"from-process-env"`, "env DSH_LLM_MODEL", `"read-only"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestWrongArgumentCountsAreUsageErrorsThatSayWhat(t *testing.T) {
	s := newSandbox(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sessions", "show"}, "dsh sessions show is missing ID (usage: dsh sessions show ID)"},
		{[]string{"sessions", "trace", "a", "b"}, `dsh sessions trace got too many arguments, starting at "b"`},
		{[]string{"sessions", "search"}, "dsh sessions search is missing QUERY"},
		{[]string{"version", "x"}, `dsh version takes no arguments, got "x"`},
		{[]string{"sessions", "search", "x", "--type", "bogus"}, `--type "bogus" is not an event type search finds`},
	} {
		r := s.exec(execOptions{}, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("dsh %s: exit %d stdout %q stderr %q, want exit 2 and %q", strings.Join(c.args, " "), r.code, r.stdout, r.stderr, c.want)
		}
	}
	if r := s.exec(execOptions{}, "tui"); r.code != exitUsage || strings.Contains(r.stderr, "dsh: dsh") {
		t.Errorf("dsh tui without a terminal: exit %d stderr %q", r.code, r.stderr)
	}
}
