package mcp

import (
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stderrTailBytes is how much of a server's stderr is kept for messages.
const stderrTailBytes = 4096

// inheritedEnv names the variables a stdio server gets from dsh's
// environment, like the reference SDKs' default environment: enough to find
// programs and a home directory, never dsh's API keys or tokens. A server
// that needs more gets it through its env entry.
var inheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG", "LC_ALL", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"}

// command builds the process of a stdio server. It leads its own process
// group (so closing the manager can kill everything it started) and gets
// SIGKILL when the thread that started it dies, so a SIGKILLed dsh leaves
// no server behind. Grandchildren that leave the group are the server's
// own business: they lose their stdin, which ends a well-behaved server.
func command(s Server, dir string, stderr *tail) *exec.Cmd {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = dir
	cmd.Env = serverEnv(s.Env, os.LookupEnv)
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A grandchild holding stderr must not keep Wait from returning.
	cmd.WaitDelay = time.Second
	return cmd
}

func serverEnv(extra map[string]string, lookup func(string) (string, bool)) []string {
	env := map[string]string{}
	for _, k := range inheritedEnv {
		if v, ok := lookup(k); ok {
			env[k] = v
		}
	}
	for k, v := range extra {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// killGroup kills the process group led by cmd's process, if it started.
func killGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// tail keeps the last stderrTailBytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - stderrTailBytes; over > 0 {
		t.buf = append(t.buf[:0:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns the kept bytes, trimmed, starting at a line when possible.
func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) == stderrTailBytes {
		for i, c := range b {
			if c == '\n' {
				b = b[i+1:]
				break
			}
		}
	}
	return strings.TrimSpace(string(b))
}
