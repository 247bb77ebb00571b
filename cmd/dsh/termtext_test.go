package main

import (
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

// hostileText tries, from a session log, to recolour the terminal, plant a
// link, write the clipboard, clear the screen with a C1 CSI and reorder the
// line with bidi overrides and isolates.
const hostileText = "cache \x1b[31mred\x1b[0m \x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ \x1b]52;c;cm0gLXJmIH4=\x07 \u009b2J \u202eevil\u202c \u2066iso\u2069 \u200f\u061c"

// assertTerminalSafe fails when out holds anything a terminal would
// interpret other than newlines and tabs.
func assertTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && r != '\t' && termtext.Unsafe(r) {
			t.Errorf("%s sends %U to the terminal:\n%q", what, r, out)
			return
		}
	}
}

func TestSessionsCommandsShowHostileLogTextEscaped(t *testing.T) {
	s := newSandbox(t)
	l := s.logs()
	// Session ids may hold C1 and bidi runes (the store refuses only C0).
	parent := "p\u202eid"
	l.add(s.header(parent), 0, turn{prompt: "first " + hostileText, reply: "reply " + hostileText})
	ws := s.cwd
	h := session.Header{ID: "child\u009b", Cwd: &ws, ParentSession: session.Ptr(parent)}
	l.add(h, 5, turn{prompt: "the " + hostileText, reply: hostileText, tool: "bash\u202e", args: `{"command":"` + strings.ReplaceAll(hostileText, "\x1b", `\u001b`) + `"}`, result: hostileText})
	for _, args := range [][]string{
		{"sessions", "show", parent},
		{"sessions", "show", "child\u009b", "--full"},
		{"sessions", "show", "child\u009b", "--events"},
		{"sessions", "list"},
		{"sessions", "list", "--all-workspaces"},
		{"sessions", "search", "cache"},
		{"sessions", "search", "cache", "--all-workspaces"},
		{"sessions", "trace", parent},
		{"sessions", "show", "no\u202esuch"},
	} {
		r := s.exec(execOptions{}, args...)
		what := strings.Join(args, " ")
		if r.code != exitOK && args[2] != "no\u202esuch" {
			t.Errorf("%s: exit %d stderr %q", what, r.code, r.stderr)
		}
		assertTerminalSafe(t, what+" (stdout)", r.stdout)
		assertTerminalSafe(t, what+" (stderr)", r.stderr)
	}
	show := s.exec(execOptions{}, "sessions", "show", parent)
	for _, want := range []string{`\x1b[31mred`, `\x1b]52;c;`, `\x9b2J`, `\u202eevil`, `\u2066iso\u2069`, `\u200f\u061c`} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("sessions show does not show %s:\n%s", want, show.stdout)
		}
	}
}
