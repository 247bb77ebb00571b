package codingtools

import (
	"context"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/procgroup"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
)

// runResult is everything the bash result is rendered from.
type runResult struct {
	exitCode int            // the shell's exit status, when signal is 0
	signal   syscall.Signal // the shell died of this signal
	cause    StopCause
	// leftovers is set when background processes kept the output open after
	// the shell exited and were stopped.
	leftovers bool
	// detached is set when something outside the process group still held
	// the output after everything in it was killed; reading stopped there.
	detached bool
	// sandbox is what the sandbox launcher enforced, for a sandboxed run;
	// sandboxErr means the command did not run sandboxed (nor at all).
	sandbox    sandbox.Report
	sandboxErr error
}

// runner is the local Runner: it starts one shell command per call and
// owns its process group until every process in it is gone; groups whose
// background members outlive the command go to groups, which kills them
// when the Set closes.
type runner struct {
	shell  string
	grace  time.Duration
	groups *procgroup.Tracker
	env    []string // the command's whole environment; nil inherits dsh's
	// sandbox, when set, runs the command under policy.
	sandbox *sandbox.Service
	policy  sandbox.Policy
}

// Run runs c in a process group of dsh's own, with c.Env as its whole
// environment.
func (r runner) Run(ctx context.Context, c Command, out io.Writer) (RunResult, error) {
	r.env = c.Env
	res, err := r.run(ctx, c.Line, c.Dir, c.Timeout, out)
	if err != nil {
		return RunResult{}, err
	}
	return res.public(), nil
}

// public is the Runner's view of a local run.
func (res runResult) public() RunResult {
	rr := RunResult{ExitCode: res.exitCode, Cause: res.cause, Leftovers: res.leftovers, Detached: res.detached}
	if res.signal != 0 {
		rr.Signal = signalName(res.signal)
	}
	return rr
}

// run executes command with bash -c in dir. Output (stdout and stderr through
// one pipe, so they interleave as written) goes to out. stdin is /dev/null;
// the shell leads a new session, so it has no controlling terminal and never
// sees dsh's stdout, where ACP frames live.
func (r runner) run(ctx context.Context, command, dir string, timeout time.Duration, out io.Writer) (runResult, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return runResult{}, err
	}
	cmd := exec.Command(r.shell, "-c", command)
	cmd.Dir = dir
	cmd.Env = r.env
	cmd.Stdin = nil
	cmd.Stdout = pw
	cmd.Stderr = pw
	// The shell leads a new session and process group: signalling the group
	// reaches every descendant that did not detach itself, the group dies
	// with dsh even on SIGKILL, and without a controlling terminal a command
	// that wants a password fails instead of stopping on SIGTTIN until the
	// timeout.
	// A sandboxed command is started by the sandbox (usually by its
	// zygote, not as dsh's child) and waited for through it.
	var proc *sandbox.Process
	start := func(cmd *exec.Cmd) (int, func(), error) {
		var err error
		if proc, err = r.sandbox.Start(cmd, r.policy); err != nil {
			return 0, nil, err
		}
		return proc.Pid(), func() { _, _ = proc.Wait() }, nil
	}
	var group *procgroup.Group
	if r.sandbox != nil {
		group, err = procgroup.StartWith(cmd, start)
	} else {
		group, err = procgroup.Start(cmd)
	}
	if err != nil {
		pw.Close()
		pr.Close()
		return runResult{}, err
	}
	pw.Close()
	defer r.groups.Keep(group)

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _ = io.Copy(out, pr)
	}()
	exited := make(chan struct{})
	var status syscall.WaitStatus
	var waitErr error
	go func() {
		defer close(exited)
		if proc != nil {
			status, waitErr = proc.Wait()
			return
		}
		_ = cmd.Wait()
		if cmd.ProcessState != nil {
			status, _ = cmd.ProcessState.Sys().(syscall.WaitStatus)
		}
	}()

	var res runResult
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
		// Background processes may still hold the output; give them the
		// grace period to finish writing before stopping them.
		grace := time.NewTimer(r.grace)
		select {
		case <-readDone:
		case <-grace.C:
			res.leftovers = true
		case <-timer.C:
			res.cause = StopTimeout
		case <-ctx.Done():
			res.cause = StopCanceled
		}
		grace.Stop()
	case <-timer.C:
		res.cause = StopTimeout
	case <-ctx.Done():
		res.cause = StopCanceled
	}
	if res.cause != StopNone || res.leftovers {
		res.detached = r.stopGroup(group, exited, readDone, pr)
	}
	<-exited
	<-readDone
	pr.Close()

	if proc != nil {
		res.sandbox, res.sandboxErr = proc.Report()
		if waitErr != nil {
			res.sandboxErr = waitErr
		}
	}
	if status.Signaled() {
		res.signal = status.Signal()
	} else {
		res.exitCode = status.ExitStatus()
	}
	return res, nil
}

// stopGroup ends the process group pgid: SIGTERM, then after the grace
// period (or as soon as the shell is gone and the output closed) SIGKILL to
// whatever is left. It returns once the shell has been reaped and the output
// is closed; if a process outside the group still holds the output after
// another grace period, it stops reading and reports true.
func (r runner) stopGroup(group *procgroup.Group, exited, readDone <-chan struct{}, pr *os.File) (detached bool) {
	_ = group.Signal(syscall.SIGTERM)
	grace := time.NewTimer(r.grace)
	waitBoth(exited, readDone, grace.C)
	grace.Stop()
	// Unconditional: members that ignore SIGTERM and do not hold the output
	// would otherwise survive.
	if err := group.Kill(); err != nil {
		_ = syscall.Kill(group.Pgid(), syscall.SIGKILL) // the leader is our unreaped child
	}
	<-exited
	last := time.NewTimer(r.grace)
	defer last.Stop()
	select {
	case <-readDone:
		return false
	case <-last.C:
		// Unblocks the reader; whatever still holds the write end left the
		// process group on purpose (setsid) and is not ours to kill.
		pr.Close()
		<-readDone
		return true
	}
}

// waitBoth waits for a and then b, giving up when stop fires.
func waitBoth(a, b <-chan struct{}, stop <-chan time.Time) {
	select {
	case <-a:
	case <-stop:
		return
	}
	select {
	case <-b:
	case <-stop:
	}
}
