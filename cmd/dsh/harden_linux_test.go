//go:build linux

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestDshIsNotDumpable starts the real binary and checks that the kernel
// treats it as non-dumpable: its /proc/PID files then belong to root
// instead of to the user running it, and the user's other processes (the
// commands bash runs for the model) cannot open /proc/PID/environ, which
// holds the model key. Issue 13 finding 6. As root the test runs dsh as
// nobody, since root's processes own nothing in the way a user's do.
func TestDshIsNotDumpable(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dshBinary, "acp", "--profile", "demo")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "DSH_HOME=" + filepath.Join(dir, "home")}
	uid := os.Getuid()
	if uid == 0 {
		// nobody must be able to run the binary and enter the directories.
		for _, p := range []string{filepath.Dir(dshBinary), dshBinary, filepath.Dir(dir)} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		uid = 65534
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: 65534}}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// An answer to initialize means main has long passed hardenProcess.
	if _, err := in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("initialize: %q %v; stderr:\n%s", line, err, stderr.String())
	}
	fi, err := os.Stat("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if owner := fi.Sys().(*syscall.Stat_t).Uid; owner != 0 {
		t.Errorf("/proc/PID/environ of dsh (running as uid %d) is owned by uid %d: dsh is dumpable, so its commands can read its environment", uid, owner)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("dsh acp: %v; stderr:\n%s", err, stderr.String())
	}
}
