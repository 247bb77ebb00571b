package main

import (
	"strings"
	"testing"
)

func TestSessionIDPrefixesResolveWhenUnique(t *testing.T) {
	s := newSandbox(t)
	l := s.logs()
	l.add(s.header("207993bb-aaaa"), 0, turn{prompt: "first", reply: "ok"})
	l.add(s.header("207993cc-bbbb"), 1, turn{prompt: "second", reply: "ok"})
	l.add(elsewhere("00c7f7ce-cccc"), 2, turn{prompt: "far away", reply: "ok"})

	show := s.run("sessions", "show", "207993b")
	wantOK(t, show)
	if !strings.Contains(show.stdout, "Session 207993bb-aaaa") {
		t.Errorf("prefix show:\n%s", show.stdout)
	}
	trace := s.run("sessions", "trace", "207993c")
	wantOK(t, trace)
	if !strings.Contains(trace.stdout, "* 207993cc-bbbb") {
		t.Errorf("prefix trace:\n%s", trace.stdout)
	}
	amb := s.run("sessions", "show", "2079")
	if amb.code != exitUsage || !strings.Contains(amb.stderr, "2 sessions start with \"2079\"") ||
		!strings.Contains(amb.stderr, "207993bb-aaaa") || !strings.Contains(amb.stderr, "207993cc-bbbb") {
		t.Errorf("ambiguous: exit %d stderr %q", amb.code, amb.stderr)
	}
	if r := s.run("sessions", "show", "ffff"); r.code != exitError || !strings.Contains(r.stderr, `no session id starts with "ffff"`) {
		t.Errorf("no match: exit %d stderr %q", r.code, r.stderr)
	}
	// An exact id of another workspace needs no --all-workspaces; a
	// prefix of one does.
	if r := s.run("sessions", "show", "00c7f7ce-cccc"); r.code != exitOK || !strings.Contains(r.stdout, "far away") {
		t.Errorf("exact id elsewhere: exit %d stderr %q", r.code, r.stderr)
	}
	if r := s.run("sessions", "show", "00c7"); r.code != exitError || !strings.Contains(r.stderr, "--all-workspaces") {
		t.Errorf("prefix elsewhere: exit %d stderr %q", r.code, r.stderr)
	}
	if r := s.run("sessions", "show", "00c7", "--all-workspaces"); r.code != exitOK {
		t.Errorf("prefix elsewhere with --all-workspaces: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestTUIResumeResolvesPrefixesBeforeTakingTheTerminal(t *testing.T) {
	s := newSandbox(t)
	l := s.logs()
	l.add(s.header("207993bb-aaaa"), 0, turn{prompt: "first", reply: "ok"})
	l.add(s.header("207993cc-bbbb"), 1, turn{prompt: "second", reply: "ok"})
	tty := execOptions{ttyOut: true, ttyIn: true}
	amb := s.exec(tty, "tui", "--profile", "demo", "--resume", "2079")
	if amb.code != exitUsage || !strings.Contains(amb.stderr, "207993bb-aaaa") || !strings.Contains(amb.stderr, "207993cc-bbbb") {
		t.Errorf("ambiguous --resume: exit %d stderr %q", amb.code, amb.stderr)
	}
	none := s.exec(tty, "tui", "--profile", "demo", "--resume", "ffff")
	if none.code != exitError || !strings.Contains(none.stderr, `no session id starts with "ffff"`) {
		t.Errorf("unknown --resume: exit %d stderr %q", none.code, none.stderr)
	}
	if r := s.exec(tty, "tui", "--resume", "a", "b"); r.code != exitUsage {
		t.Errorf("two arguments: exit %d stderr %q", r.code, r.stderr)
	}
	if r := s.exec(tty, "tui", "-c", "--resume", "2079"); r.code != exitUsage || !strings.Contains(r.stderr, "exclude each other") {
		t.Errorf("-c with --resume: exit %d stderr %q", r.code, r.stderr)
	}
	empty := newSandbox(t)
	if r := empty.exec(tty, "-c", "--profile", "demo"); r.code != exitError || !strings.Contains(r.stderr, "no session to continue") {
		t.Errorf("dsh -c without sessions: exit %d stderr %q", r.code, r.stderr)
	}
}
