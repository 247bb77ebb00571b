package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/internal/mcptest"

	"golang.org/x/sys/unix"
)

// dshBinary is the dsh binary built once for the tests that drive the real
// process (exit codes, terminals, stdin); TestMain sets it.
var dshBinary string

func TestMain(m *testing.M) {
	if mcptest.Serve() {
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "dsh-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dshBinary = filepath.Join(dir, "dsh")
	build := exec.Command("go", "build", "-o", dshBinary, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build dsh: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// execResult is what one run of the binary left behind.
type execResult struct {
	code           int
	stdout, stderr string
}

// execOptions shapes one run of the binary.
type execOptions struct {
	stdin    io.Reader
	ttyOut   bool // stdout is a pseudo-terminal
	ttyIn    bool // so is stdin (with ttyOut: the same one)
	extraEnv map[string]string
}

// exec runs the built binary in the sandbox's directory with only its
// environment (and PATH).
func (s *sandbox) exec(opts execOptions, args ...string) execResult {
	s.t.Helper()
	cmd := exec.Command(dshBinary, args...)
	cmd.Dir = s.cwd
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range opts.extraEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if opts.stdin != nil {
		cmd.Stdin = opts.stdin
	}
	var stdout, stderr strings.Builder
	cmd.Stderr = &stderr
	var ptyOut <-chan string
	if opts.ttyOut {
		master, slave := openPTY(s.t)
		cmd.Stdout = slave
		if opts.ttyIn {
			cmd.Stdin = slave
		}
		ptyOut = drain(master)
		defer master.Close()
	} else {
		cmd.Stdout = &stdout
	}
	err := cmd.Start()
	if err != nil {
		s.t.Fatal(err)
	}
	if opts.ttyOut {
		// Only the child holds the terminal now: its exit ends the reads.
		cmd.Stdout.(*os.File).Close()
	}
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatal(err)
	}
	out := stdout.String()
	if ptyOut != nil {
		// The terminal turns \n into \r\n on output.
		out = strings.ReplaceAll(<-ptyOut, "\r\n", "\n")
	}
	return execResult{code: code, stdout: out, stderr: stderr.String()}
}

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("name the pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		m.Close()
		t.Fatalf("open the pseudo-terminal's slave: %v", err)
	}
	return m, s
}

// drain reads the master side until the slave is closed everywhere.
func drain(master *os.File) <-chan string {
	ch := make(chan string, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		ch <- b.String()
	}()
	return ch
}
