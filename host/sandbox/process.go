package sandbox

import (
	"errors"
	"os/exec"
	"strconv"
	"syscall"
)

// Process is a command started in the sandbox. Its owner calls Wait once,
// then Report.
type Process struct {
	pid    int
	policy Policy
	wait   func() (syscall.WaitStatus, error)
	report func() (Report, error)
}

// Pid is the command's process id (the leader of its process group when
// cmd asked for a new session or group).
func (p *Process) Pid() int { return p.pid }

// Policy is the policy the command runs under.
func (p *Process) Policy() Policy { return p.policy }

// Wait waits for the command to exit and for its output to be copied
// (when cmd's stdio were not files), and returns its wait status. An error
// means the status is lost (the launcher died first).
func (p *Process) Wait() (syscall.WaitStatus, error) { return p.wait() }

// Report returns what the sandbox enforced, after Wait; an error means the
// command did not run sandboxed (nor at all).
func (p *Process) Report() (Report, error) { return p.report() }

// ExitError is the error of a command that did not exit with status 0.
type ExitError struct{ Status syscall.WaitStatus }

func (e *ExitError) Error() string {
	if e.Status.Signaled() {
		return "signal: " + e.Status.Signal().String()
	}
	return "exit status " + strconv.Itoa(e.Status.ExitStatus())
}

// waitCmd waits for cmd, started directly, and returns its wait status.
func waitCmd(cmd *exec.Cmd) (syscall.WaitStatus, error) {
	err := cmd.Wait()
	if cmd.ProcessState == nil {
		return 0, err
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return 0, errors.New("sandbox: no wait status on this platform")
	}
	return ws, nil
}
