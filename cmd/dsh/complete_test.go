package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// completions runs the shell's completion request and returns the offered
// values (descriptions cut off) and the directive line.
func (s *sandbox) completions(args ...string) ([]string, string) {
	s.t.Helper()
	r := s.run(append([]string{"__complete"}, args...)...)
	wantOK(s.t, r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var out []string
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		out = append(out, v)
	}
	return out, lines[len(lines)-1]
}

func TestShellCompletionOffersSessionIDsProfilesKeysAndEventTypes(t *testing.T) {
	s := newSandbox(t)
	l := s.logs()
	l.add(s.header("aa11-here"), 0, turn{prompt: "first", reply: "ok"})
	l.add(s.header("bb22-here"), 1, turn{prompt: "second", reply: "ok"})
	l.add(elsewhere("aa33-remote"), 2, turn{prompt: "third", reply: "ok"})
	s.write(filepath.Join(s.home, "profiles", "mine.yaml"), "llm:\n  model: x\n")

	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"sessions", "show", "aa"}, []string{"aa11-here", "aa33-remote"}},
		{[]string{"sessions", "trace", "bb"}, []string{"bb22-here"}},
		{[]string{"tui", "--resume", "a"}, []string{"aa11-here", "aa33-remote"}},
		{[]string{"--profile", ""}, []string{"default", "demo", "mine", "session-query", "snapshot"}},
		{[]string{"run", "--set", "llm.retry.max_r"}, []string{"llm.retry.max_retries="}},
		{[]string{"config", "show", "llm.retry."}, []string{"llm.retry.initial_delay_ms", "llm.retry.jitter", "llm.retry.max_delay_ms", "llm.retry.max_retries"}},
		{[]string{"sessions", "search", "--type", ""}, searchableTypes()},
	}
	for _, tt := range tests {
		got, directive := s.completions(tt.args...)
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("dsh %s<TAB> = %q, want %q", strings.Join(tt.args, " "), got, tt.want)
		}
		if directive == ":0" {
			t.Errorf("dsh %s<TAB> falls back to file names", strings.Join(tt.args, " "))
		}
	}
}

func TestCompletionWithABrokenConfigOffersNothingAndPrintsNothing(t *testing.T) {
	s := newSandbox(t)
	s.logs().add(s.header("aa11-here"), 0, turn{prompt: "first", reply: "ok"})
	if err := os.WriteFile(filepath.Join(s.home, "config.yaml"), []byte("llm: [broken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := s.run("__complete", "sessions", "show", "")
	if strings.Contains(r.stdout, "aa11") || strings.Contains(r.stdout, "broken") {
		t.Errorf("completion with a broken config = %q", r.stdout)
	}
}
