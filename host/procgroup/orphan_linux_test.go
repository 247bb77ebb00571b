package procgroup

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestSigkillOfTheOwnerLeavesNoProcess is the acceptance check: a
// stand-in for dsh starts commands with background children, is SIGKILLed
// twenty times, and nothing it started survives.
func TestSigkillOfTheOwnerLeavesNoProcess(t *testing.T) {
	commands := []string{
		"sleep 300 & sleep 300",
		"sleep 300 >/dev/null 2>&1 & exec sleep 300",
		"trap '' TERM HUP; (trap '' TERM HUP; sleep 300) & sleep 300 & wait",
		"while :; do sleep 300; done",
	}
	for i := range 20 {
		command := commands[i%len(commands)]
		helper := exec.Command(os.Args[0], "-test.run=^$")
		helper.Env = append(os.Environ(), helperEnv+"="+command)
		helper.Stderr = os.Stderr
		stdout, err := helper.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			_ = helper.Process.Kill()
			_ = helper.Wait()
			t.Fatalf("run %d: the helper printed no group: %v", i, err)
		}
		pgid, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := members(pgid); len(m) < 2 {
			t.Errorf("run %d: group %d has %v before the kill, want the command and the watcher", i, pgid, m)
		}
		if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = helper.Wait()
		gone(t, pgid)
	}
}
