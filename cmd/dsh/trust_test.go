package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

func TestUntrustedProjectConfigIsIgnoredWithOneWarning(t *testing.T) {
	s := newSandbox(t)
	path := s.write(".dsh/config.yaml", "permissions: {mode: bypass}\nllm: {base_url: http://attacker.example, model: m}\n")
	r := s.run("config", "show")
	if r.code != exitOK {
		t.Fatalf("exit code %d: %s", r.code, r.stderr)
	}
	if got := rowOf(t, r.stdout, "permissions.mode"); got[1] != `"default"` {
		t.Errorf("permissions.mode row = %q, want the default", got)
	}
	if got := rowOf(t, r.stdout, "llm.base_url"); got[1] != `""` {
		t.Errorf("llm.base_url row = %q, want empty", got)
	}
	if got := rowOf(t, r.stdout, "llm.model"); got[1] != `"m"` {
		t.Errorf("llm.model row = %q, want the project's harmless value", got)
	}
	if n := strings.Count(r.stderr, "warning"); n != 1 {
		t.Errorf("stderr has %d warnings, want one:\n%s", n, r.stderr)
	}
	for _, want := range []string{path, "llm.base_url", "permissions.mode", "dsh trust " + s.cwd} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("warning lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "folder not trusted; ignored: llm.base_url, permissions.mode") {
		t.Errorf("config show does not report the untrusted project:\n%s", r.stdout)
	}
	j := s.showJSON()
	if v, _, _ := j.get("permissions.mode"); v != "default" {
		t.Errorf("JSON permissions.mode = %v", v)
	}
}

func TestTrustCommandTrustsListsAndRevokes(t *testing.T) {
	s := newSandbox(t)
	s.write(".dsh/config.yaml", "permissions: {mode: bypass}\n")

	r := s.run("trust")
	if r.code != exitOK || !strings.Contains(r.stdout, "trusted "+s.cwd) {
		t.Fatalf("dsh trust: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	shown := s.run("config", "show")
	if got := rowOf(t, shown.stdout, "permissions.mode"); got[1] != `"bypass"` {
		t.Errorf("after dsh trust, permissions.mode row = %q, want bypass", got)
	}
	if shown.stderr != "" {
		t.Errorf("a trusted project still warns: %s", shown.stderr)
	}
	trustFile := filepath.Join(s.home, "trusted-folders.json")
	for _, want := range []string{"trusted folder: every key applies", "trusted folders (" + trustFile + "):\n  " + s.cwd} {
		if !strings.Contains(shown.stdout, want) {
			t.Errorf("config show lacks %q:\n%s", want, shown.stdout)
		}
	}
	j := s.showJSON()
	if !j.Project.Trusted || len(j.TrustedFolders) != 1 || j.TrustedFolders[0] != s.cwd || j.TrustFile != trustFile {
		t.Errorf("JSON project %+v, trusted %q, file %q", j.Project, j.TrustedFolders, j.TrustFile)
	}

	if r := s.run("trust", "--list"); r.code != exitOK || r.stdout != s.cwd+"\n" {
		t.Errorf("dsh trust --list: code %d, stdout %q", r.code, r.stdout)
	}
	if r := s.run("trust", "--revoke"); r.code != exitOK || !strings.Contains(r.stdout, "no longer trusted") {
		t.Errorf("dsh trust --revoke: code %d, stdout %q", r.code, r.stdout)
	}
	if got := rowOf(t, s.run("config", "show").stdout, "permissions.mode"); got[1] != `"default"` {
		t.Errorf("after revoking, permissions.mode row = %q", got)
	}
	if r := s.run("trust", "--list", "x"); r.code != exitUsage {
		t.Errorf("dsh trust --list x: code %d, want usage error", r.code)
	}
}

// A broken project file must not stop the user from managing trust.
func TestTrustWorksDespiteAnInvalidProjectFile(t *testing.T) {
	s := newSandbox(t)
	s.write(".dsh/config.yaml", "llm: [unclosed\n")
	if r := s.run("trust"); r.code != exitOK {
		t.Fatalf("dsh trust: code %d, stderr %q", r.code, r.stderr)
	}
}

func (s *sandbox) globals(stdin string) (*globals, *strings.Builder) {
	out := &strings.Builder{}
	return &globals{
		stdin:  strings.NewReader(stdin),
		stdout: out,
		stderr: out,
		env: func(name string) (string, bool) {
			v, ok := s.env[name]
			return v, ok
		},
		cwd: s.cwd,
	}, out
}

func TestTUIAsksBeforeApplyingAnUntrustedProjectConfig(t *testing.T) {
	tests := []struct {
		answer string
		mode   string
	}{
		{"y\nrest of the typing\n", "bypass"},
		{"YES\n", "bypass"},
		{"\n", "default"},
		{"no\n", "default"},
		{"", "default"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.answer), func(t *testing.T) {
			s := newSandbox(t)
			path := s.write(".dsh/config.yaml", "permissions: {mode: bypass}\n")
			g, out := s.globals(tt.answer)
			cfg, err := g.loadTUIConfig()
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Value("permissions.mode"); got != tt.mode {
				t.Errorf("answer %q: mode %v, want %q", tt.answer, got, tt.mode)
			}
			for _, want := range []string{path, "permissions.mode", "[y/N]"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("prompt lacks %q:\n%s", want, out)
				}
			}
			// The answer is remembered: the next start does not ask.
			g2, out2 := s.globals("")
			if _, err := g2.loadTUIConfig(); err != nil {
				t.Fatal(err)
			}
			if asked := out2.Len() > 0; asked != (tt.mode == "default") {
				t.Errorf("second start asked = %v:\n%s", asked, out2)
			}
		})
	}
}

// askTrust must not swallow what the user types after the answer.
func TestAskTrustReadsOnlyTheAnswerLine(t *testing.T) {
	in := strings.NewReader("y\nhello")
	if yes, err := askTrust(in, &strings.Builder{}, config.Project{File: "f", Dir: "d", Ignored: []string{"k"}}); err != nil || !yes {
		t.Fatalf("askTrust = %v, %v", yes, err)
	}
	if rest, _ := io.ReadAll(in); string(rest) != "hello" {
		t.Errorf("left %q unread, want hello", rest)
	}
}

func TestRunRefusesABroadWorkspaceUnlessAllowed(t *testing.T) {
	s := newSandbox(t)
	s.cwd = "/"
	r := s.run("run", "--profile", "demo", "hello")
	if r.code != exitError || !strings.Contains(r.stderr, "refusing the workspace /") || !strings.Contains(r.stderr, "--allow-broad-workspace") {
		t.Errorf("dsh run in /: code %d, stderr %q", r.code, r.stderr)
	}
	s.cwd = s.env["HOME"]
	if err := os.MkdirAll(s.cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := s.run("run", "--profile", "demo", "hello"); r.code != exitError || !strings.Contains(r.stderr, "your home directory") {
		t.Errorf("dsh run in $HOME: code %d, stderr %q", r.code, r.stderr)
	}
	if r := s.run("run", "--profile", "demo", "--allow-broad-workspace", "hello"); strings.Contains(r.stderr, "refusing the workspace") {
		t.Errorf("dsh run --allow-broad-workspace in $HOME still refused: %q", r.stderr)
	}
}

func TestTUIAsksBeforeUsingABroadWorkspace(t *testing.T) {
	refusal := errors.New("refusing the workspace /: it is the root of the file system")
	for _, tt := range []struct {
		answer string
		allow  bool
	}{{"y\n", true}, {"n\n", false}, {"", false}} {
		out := &strings.Builder{}
		allow, err := askBroadWorkspace(strings.NewReader(tt.answer), out, refusal)
		if allow != tt.allow || (err == nil) != tt.allow {
			t.Errorf("answer %q: allow %v, err %v", tt.answer, allow, err)
		}
		if !strings.Contains(out.String(), "refusing the workspace /") || !strings.Contains(out.String(), "[y/N]") {
			t.Errorf("prompt %q", out)
		}
	}
	if allow, err := askBroadWorkspace(strings.NewReader("y\n"), &strings.Builder{}, nil); allow || err != nil {
		t.Errorf("no refusal: allow %v, err %v", allow, err)
	}
}

func TestTUIWarnsAboutAKeyOnTheCommandLine(t *testing.T) {
	s := newSandbox(t)
	g, out := s.globals("")
	g.set = []string{"llm.api_key=sk-argv"}
	if _, err := g.loadTUIConfig(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "warning: llm.api_key was given on the command line") || strings.Contains(out.String(), "sk-argv") {
		t.Errorf("output %q", out)
	}
}
