package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// maxReport bounds what is read from the launcher's report pipe.
const maxReport = 64 << 10

// startThrough starts cmd through a fresh launcher (launcher LauncherArg
// ...), which restricts itself under p and execs cmd; the Process reads the
// launcher's report from a private pipe.
func startThrough(launcher string, cmd *exec.Cmd, p Policy) (*Process, error) {
	if err := startable(cmd); err != nil {
		return nil, err
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
	err = cmd.Start()
	// This process's copy of the write end must go, so that the read
	// sees end of file once the launcher exec'd (or died).
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	done := make(chan struct{})
	var rep Report
	var rerr error
	go func() {
		defer close(done)
		defer r.Close()
		rep, rerr = readReport(r)
	}()
	return &Process{
		pid:    cmd.Process.Pid,
		policy: p,
		wait:   func() (syscall.WaitStatus, error) { return waitCmd(cmd) },
		report: func() (Report, error) { <-done; return rep, rerr },
	}, nil
}

// readReport reads the report a launcher writes before it execs.
func readReport(r io.Reader) (Report, error) {
	var rep Report
	b, err := io.ReadAll(io.LimitReader(r, maxReport))
	switch {
	case err != nil:
		return rep, fmt.Errorf("cannot read the sandbox report: %w", err)
	case len(b) == 0:
		return rep, errors.New("the sandbox launcher ended without reporting; the command did not run")
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return rep, fmt.Errorf("the sandbox launcher sent a bad report: %w", err)
	}
	if rep.Error != "" {
		return rep, errors.New(rep.Error)
	}
	return rep, nil
}

// startable checks that cmd can still be started.
func startable(cmd *exec.Cmd) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	if cmd.Process != nil {
		return errors.New("sandbox: command already started")
	}
	return nil
}
