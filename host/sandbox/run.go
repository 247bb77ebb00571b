package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
)

// maxReport bounds what is read from the launcher's report pipe.
const maxReport = 64 << 10

// Run is one sandboxed command's link to its launcher. Its methods are
// nil-safe, so callers can hold a nil *Run for an unsandboxed command.
type Run struct {
	policy Policy
	r, w   *os.File
	done   chan struct{}
	report Report
	err    error
}

// launchThrough rewrites cmd to start as launcher LauncherArg ... and
// returns the Run reading the launcher's report.
func launchThrough(launcher string, cmd *exec.Cmd, p Policy) (*Run, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil {
		return nil, errors.New("sandbox: command already started")
	}
	policy, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot create the sandbox report pipe: %w", err)
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cmd.Args = append([]string{launcher, LauncherArg, strconv.Itoa(fd), string(policy), cmd.Path}, cmd.Args...)
	cmd.Path = launcher
	return &Run{policy: p, r: r, w: w, done: make(chan struct{})}, nil
}

// Policy returns the policy the command runs under.
func (r *Run) Policy() Policy {
	if r == nil {
		return Policy{}
	}
	return r.policy
}

// Started is called once the command has started: it drops this process's
// copy of the report pipe's write end and starts reading the report, which
// the launcher writes before it execs the command.
func (r *Run) Started() {
	if r == nil {
		return
	}
	r.w.Close()
	go func() {
		defer close(r.done)
		defer r.r.Close()
		b, err := io.ReadAll(io.LimitReader(r.r, maxReport))
		switch {
		case err != nil:
			r.err = fmt.Errorf("cannot read the sandbox report: %w", err)
		case len(b) == 0:
			r.err = errors.New("the sandbox launcher ended without reporting; the command did not run")
		default:
			if err := json.Unmarshal(b, &r.report); err != nil {
				r.err = fmt.Errorf("the sandbox launcher sent a bad report: %w", err)
			} else if r.report.Error != "" {
				r.err = errors.New(r.report.Error)
			}
		}
	}()
}

// Abort releases the pipe of a command that failed to start.
func (r *Run) Abort() {
	if r == nil {
		return
	}
	r.w.Close()
	r.r.Close()
}

// Finish waits for the report, after the command exited, and returns it;
// an error means the command did not run sandboxed (or did not run).
func (r *Run) Finish() (Report, error) {
	if r == nil {
		return Report{}, nil
	}
	<-r.done
	return r.report, r.err
}
