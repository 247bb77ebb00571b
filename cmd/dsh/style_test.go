package main

import (
	"strings"
	"testing"
)

func TestSearchHighlightsMatchesOnATerminalOnly(t *testing.T) {
	s := newSandbox(t)
	populate(s)
	tty := execOptions{ttyOut: true}

	r := s.exec(tty, "sessions", "search", "cache test")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, sgrMatch+"cache"+sgrReset) || !strings.Contains(r.stdout, sgrMatch+"test"+sgrReset) || !strings.Contains(r.stdout, sgrID) {
		t.Errorf("no highlighting on a terminal:\n%q", r.stdout)
	}
	for _, env := range []map[string]string{{"NO_COLOR": "1"}, {"TERM": "dumb"}} {
		if r := s.exec(execOptions{ttyOut: true, extraEnv: env}, "sessions", "search", "cache test"); r.code != exitOK || strings.Contains(r.stdout, "\x1b[") {
			t.Errorf("colours with %v:\n%q", env, r.stdout)
		}
	}
	if r := s.exec(tty, "sessions", "search", "--json", "cache test"); strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("colours in JSON:\n%q", r.stdout)
	}
	if r := s.exec(execOptions{}, "sessions", "search", "cache test"); r.code != exitOK || strings.Contains(r.stdout, "\x1b[") || !strings.Contains(r.stdout, "cache test") {
		t.Errorf("colours in piped output:\n%q", r.stdout)
	}
}

func TestHighlightingNeverLetsLogTextReachTheTerminal(t *testing.T) {
	s := newSandbox(t)
	s.logs().add(s.header("evil"), 0, turn{prompt: "cache \x1b]52;c;ZXZpbA==\x07 poison", reply: "ok"})
	r := s.exec(execOptions{ttyOut: true}, "sessions", "search", "poison")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "\x1b]") || strings.Contains(r.stdout, "\x07") || !strings.Contains(r.stdout, `\x1b]52`) {
		t.Errorf("log text reached the terminal unescaped:\n%q", r.stdout)
	}
}
