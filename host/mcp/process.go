package mcp

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/seed-e9b4dba4/dsh/host/procgroup"
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

// command builds the process of a stdio server.
func command(s Server, dir string, stderr *tail) *exec.Cmd {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = dir
	cmd.Env = serverEnv(s.Env, os.LookupEnv)
	cmd.Stderr = stderr
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

// proc is a started stdio server: dsh holds its pipes' ends, and one
// goroutine waits for it, so how it ended is known exactly once. It runs
// in its own session and process group, guarded by procgroup to die with
// dsh however dsh ends (SIGKILL included), with whatever it started.
type proc struct {
	cmd   *exec.Cmd
	group *procgroup.Group
	done  chan struct{} // closed once the process was waited for
	state string        // how it ended; set before done is closed
}

// startProc starts the server and returns the transport over its stdin and
// stdout. The pipes are dsh's own, so waiting for the process never races
// with reading its last output.
func startProc(s Server, dir string, stderr *tail) (*proc, sdk.Transport, error) {
	if _, err := exec.LookPath(s.Command); err != nil {
		return nil, nil, err
	}
	cmd := command(s, dir, stderr)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	group, err := procgroup.Start(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, err
	}
	p := &proc{cmd: cmd, group: group, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		if err := cmd.Wait(); err != nil && cmd.ProcessState == nil {
			p.state = err.Error()
			return
		}
		p.state = cmd.ProcessState.String()
	}()
	return p, &sdk.IOTransport{Reader: outR, Writer: inW}, nil
}

// stop ends the process after its stdin was closed: it waits grace for a
// clean exit, then signals the whole group with SIGTERM and, after grace
// again, SIGKILL, and returns once the process was waited for. Whatever the
// server left running in its group is killed too.
func (p *proc) stop(grace time.Duration) {
	if p == nil {
		return
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-p.done:
			_ = p.group.Kill()
			return
		case <-time.After(grace):
		}
		_ = p.group.Signal(sig)
	}
	<-p.done
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
