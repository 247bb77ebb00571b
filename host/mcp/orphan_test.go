package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/mcp"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	"github.com/seed-e9b4dba4/dsh/internal/mcptest"
)

// envParent makes the test binary a stand-in for dsh: it starts three
// stdio servers that outlive their stdin, recording into the named
// directory, prints "ready" once
// they are up and waits to be killed.
const envParent = "DSH_MCPTEST_PARENT"

// parentMain runs in the stand-in process.
func parentMain(state string) {
	var servers []mcp.Server
	for i := range 3 {
		servers = append(servers, stdioServer(fmt.Sprintf("s%d", i), "linger", state))
	}
	m, err := mcp.Start(mcp.Options{Session: "s", Registry: tools.NewRegistry(nil), Servers: servers})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := m.Wait(context.Background()); err != nil {
		os.Exit(1)
	}
	for _, s := range m.Status() {
		if s.State != mcp.StateReady {
			fmt.Fprintln(os.Stderr, s.Message())
			os.Exit(1)
		}
	}
	fmt.Println("ready")
	select {}
}

// TestSigkillOfDshLeavesNoServer SIGKILLs a process running three MCP
// servers twenty times and finds none of the sixty servers alive after.
func TestSigkillOfDshLeavesNoServer(t *testing.T) {
	var pids []int
	for i := range 20 {
		state := t.TempDir()
		parent := exec.Command(os.Args[0], "-test.run=^$")
		parent.Env = append(os.Environ(), envParent+"="+state)
		parent.Stderr = os.Stderr
		stdout, err := parent.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := parent.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
			_ = parent.Process.Kill()
			_ = parent.Wait()
			t.Fatalf("run %d: the stand-in did not get its servers up: %q %v", i, line, err)
		}
		run := mcptest.Pids(state)
		if len(run) != 3 {
			t.Fatalf("run %d: %d servers recorded, want 3", i, len(run))
		}
		if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = parent.Wait()
		pids = append(pids, run...)
	}
	// The guards kill each group as soon as they see dsh gone; the kernel
	// takes a moment to deliver that, so this waits for it, boundedly.
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("MCP server %d outlived the SIGKILL of its dsh", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
