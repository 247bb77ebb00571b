package procgroup

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a stand-in for dsh: it starts the
// command in HELPER_COMMAND through Start, prints the group id and blocks
// until it is killed.
const helperEnv = "PROCGROUP_TEST_HELPER"

func TestMain(m *testing.M) {
	if cmd := os.Getenv(helperEnv); cmd != "" {
		helperMain(cmd)
		return
	}
	os.Exit(m.Run())
}

func helperMain(command string) {
	c := exec.Command("bash", "-c", command)
	g, err := Start(c)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	os.Stdout.WriteString(strconv.Itoa(g.Pgid()) + "\n")
	_ = c.Wait()
	select {} // until SIGKILL
}

// gone waits until group pgid has no live member; the processes are not our
// children once reparented, so polling /proc is the only way to observe them.
// The deadline only bounds a failure.
func gone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, err := members(pgid)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) == 0 {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			t.Fatalf("group %d still has %v", pgid, m)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestTheCommandKeepsItsPidStatusSignalArgvAndFiles(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := exec.Command("bash", "-c", `echo "$$|$1|$2" >&3; kill -TERM $$`, "bash", "two words", "*")
	c.ExtraFiles = []*os.File{w}
	var out strings.Builder
	c.Stdout = &out
	g, err := Start(c)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(g.Pgid()) + "|two words|*\n"; line != want {
		t.Errorf("the command saw %q, want %q", line, want)
	}
	if g.Pgid() != c.Process.Pid {
		t.Errorf("pgid %d, leader %d", g.Pgid(), c.Process.Pid)
	}
	err = c.Wait()
	ws, _ := c.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("wait = %v, want killed by SIGTERM", err)
	}
	if out.String() != "" {
		t.Errorf("stdout = %q", out.String())
	}
	if !g.Release() {
		t.Error("a finished group was not released")
	}
	gone(t, g.Pgid())
}

func TestTheWatcherDoesNotHoldTheOutput(t *testing.T) {
	c := exec.Command("bash", "-c", "echo hi")
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Start(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(stdout) // end of file only if the watcher closed it
	if err != nil || string(b) != "hi\n" {
		t.Errorf("output %q, %v", b, err)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if !g.Release() {
		t.Error("not released")
	}
}

func TestAGroupWithBackgroundMembersStaysGuardedUntilKilled(t *testing.T) {
	c := exec.Command("bash", "-c", "sleep 300 >/dev/null 2>&1 & echo $!")
	var out strings.Builder
	c.Stdout = &out
	g, err := Start(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	sleeper, _ := strconv.Atoi(strings.TrimSpace(out.String()))
	m, _ := members(g.Pgid())
	if !slices.Contains(m, sleeper) || !slices.Contains(m, g.watcher) {
		t.Errorf("members %v, want the sleeper %d and the watcher %d", m, sleeper, g.watcher)
	}
	var tr Tracker
	tr.Keep(g)
	if tr.Len() != 1 {
		t.Fatalf("kept %d groups, want 1", tr.Len())
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	gone(t, g.Pgid())
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("signal after kill: %v", err)
	}
	after := exec.Command("true")
	g2, err := Start(after)
	if err != nil {
		t.Fatal(err)
	}
	_ = after.Wait()
	tr.Keep(g2) // after Close: killed, not kept
	if tr.Len() != 0 {
		t.Error("a group was kept after Close")
	}
}

func TestTheWatcherSurvivesTermAndKeepsGuarding(t *testing.T) {
	c := exec.Command("bash", "-c", "trap '' TERM; kill -TERM 0; echo survived")
	var out strings.Builder
	c.Stdout = &out
	g, err := Start(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil || out.String() != "survived\n" {
		t.Fatalf("%q, %v", out.String(), err)
	}
	m, _ := members(g.Pgid())
	if !slices.Equal(m, []int{g.watcher}) {
		t.Errorf("members after TERM = %v, want only the watcher %d", m, g.watcher)
	}
	if !g.Release() {
		t.Error("not released")
	}
	gone(t, g.Pgid())
}

func TestStartRefusesAStartedOrUnresolvedCommand(t *testing.T) {
	if _, err := Start(exec.Command("no-such-command-procgroup")); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("missing command: %v", err)
	}
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(c); err == nil {
		t.Error("started twice")
	}
}
