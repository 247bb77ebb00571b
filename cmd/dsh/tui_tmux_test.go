//go:build tmux

// The tmux smoke test drives the built binary in a real terminal: tmux
// provides the pty, send-keys types and capture-pane reads the screen. It
// needs tmux, so it is behind the tmux build tag and run by
// `make tui-smoke`, not by go test ./... or CI.

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmuxPane is one detached tmux session on a private server socket.
type tmuxPane struct {
	t      *testing.T
	socket string
	name   string
	last   string
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, Escape, C-c) or literal text (-l).
func (p *tmuxPane) keys(keys ...string) {
	p.tmux(append([]string{"send-keys", "-t", p.name}, keys...)...)
}

func (p *tmuxPane) text(s string) { p.tmux("send-keys", "-t", p.name, "-l", s) }

func (p *tmuxPane) capture() string { return p.tmux("capture-pane", "-p", "-t", p.name) }

// waitFor polls the pane until every text is shown. Polling is the only way
// to observe another process's terminal; the deadline only ends a broken
// run.
func (p *tmuxPane) waitFor(texts ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		p.last = p.capture()
		ok := true
		for _, s := range texts {
			if !strings.Contains(p.last, s) {
				ok = false
				break
			}
		}
		if ok {
			return p.last
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("pane never showed %q; it shows:\n%s", texts, p.last)
		}
		<-tick.C
	}
}

// startPane builds dsh and runs it in a 110x34 tmux pane with env, in cwd;
// the pane stays after dsh exits so its last words can be read.
func startPane(t *testing.T, cwd string, env map[string]string, args ...string) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("make tui-smoke needs tmux (apt-get install tmux)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "dsh")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var script strings.Builder
	script.WriteString("#!/bin/sh\ncd " + shellQuote(cwd) + "\n")
	for k, v := range env {
		fmt.Fprintf(&script, "export %s=%s\n", k, shellQuote(v))
	}
	script.WriteString(shellQuote(bin))
	for _, a := range args {
		script.WriteString(" " + shellQuote(a))
	}
	script.WriteString("\necho \"[dsh exited with code $?]\"\nsleep 600\n")
	run := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(run, []byte(script.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &tmuxPane{t: t, socket: "dsh-smoke-" + filepath.Base(dir), name: "dsh"}
	p.tmux("-f", "/dev/null", "new-session", "-d", "-s", p.name, "-x", "110", "-y", "34", run)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	return p
}

// TestTmuxSmoke runs `dsh tui --profile demo` in a real terminal: the
// recorded demo greets, tours the workspace (glob, an ls that needs
// approval, a read) and answers; then /search finds the conversation and
// opens it read-only, and Ctrl+C twice exits with the resume command.
func TestTmuxSmoke(t *testing.T) {
	root := t.TempDir()
	cwd, home := filepath.Join(root, "project"), filepath.Join(root, "dsh-home")
	for _, d := range []string{cwd, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"README.md": "# Example project\n\nA small project to try dsh on.\n", "main.go": "package main\n\nfunc main() {}\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(cwd, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"HOME": filepath.Join(root, "user"), "DSH_HOME": home, "PATH": os.Getenv("PATH"), "TERM": "screen-256color",
	}
	p := startPane(t, cwd, env, "tui", "--profile", "demo")

	p.waitFor("Type a message and press Enter", "○ ready", "dsh-demo")
	p.text("hi")
	p.keys("Enter")
	main := p.waitFor("● Hello! I'm dsh, a coding agent", "○ ready")
	t.Logf("main view:\n%s", main)

	p.text("What's in this project?")
	p.keys("Enter")
	approval := p.waitFor("Approval needed", "$ ls -la", "Allow once (y)")
	t.Logf("approval dialog:\n%s", approval)
	p.text("y")
	cards := p.waitFor("✓ List the workspace", "✓ Read README.md", "That's the tour.", "○ ready")
	t.Logf("tool cards:\n%s", cards)
	p.keys("C-o")
	expanded := p.waitFor("tool cards expanded")
	t.Logf("tool cards expanded:\n%s", expanded)
	p.keys("C-o", "C-o")

	p.text("/search the tour")
	p.keys("Enter")
	results := p.waitFor("Search the tour", "reply: That's the tour.", "1 session")
	t.Logf("search results:\n%s", results)
	p.keys("Enter")
	viewer := p.waitFor("Viewing", "read-only", "That's the tour.")
	t.Logf("read-only viewer:\n%s", viewer)
	// One Escape at a time: two in a row reach the terminal as one Alt+Esc.
	p.keys("Escape")
	p.waitFor("Search the tour", "1 session")
	p.keys("Escape")
	p.waitFor("○ ready")

	p.keys("C-c")
	p.waitFor("Press Ctrl+C again to exit")
	p.keys("C-c")
	exit := p.waitFor("Resume this session with: dsh tui --profile demo --resume ", "[dsh exited with code 0]")
	t.Logf("after exit:\n%s", exit)
}
