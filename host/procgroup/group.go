package procgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// prologue runs as the group leader before exec'ing the command. $1 is the
// guard's descriptor number; the rest is the command's argv. The watcher
// closes everything else it inherited, so it never holds the command's
// output or the caller's extra files open.
//
// The termination signals are ignored before the fork, so the watcher is
// immune from its first instruction, and reset before exec: a signal that
// was already ignored when sh started stays ignored (POSIX), so the command
// sees exactly the dispositions it would have without the prologue.
const prologue = `g=$1; shift
trap '' HUP INT QUIT TERM
(
	exec </dev/null >/dev/null 2>&1
	i=3
	while [ "$i" -lt "$g" ]; do eval "exec $i>&-"; i=$((i + 1)); done
	IFS= read -r _ <&"$g" || kill -s KILL 0
) &
echo "$!" >&"$g"
eval "exec $g>&-"
trap - HUP INT QUIT TERM
exec "$@"`

// shell runs the prologue; POSIX sh is the one interpreter every Unix has.
const shell = "/bin/sh"

// Group is a started command's process group and its guard.
type Group struct {
	pgid    int
	watcher int

	mu    sync.Mutex
	guard *os.File // nil once released or killed
}

// Start starts cmd, which must not have been started, as the leader of a new
// session and process group guarded to die with this process. cmd's
// SysProcAttr gains Setsid; its Path and Args are rewritten to run the
// prologue, so read the leader's pid from the Group or cmd.Process. On error
// nothing is left running. The caller waits for cmd as usual and then calls
// Release, Kill or Tracker.Keep; dropping a Group without that kills the group
// when the garbage collector closes the guard.
func Start(cmd *exec.Cmd) (*Group, error) {
	return StartWith(cmd, func(cmd *exec.Cmd) (int, func(), error) {
		if err := cmd.Start(); err != nil {
			return 0, nil, err
		}
		return cmd.Process.Pid, func() { _ = cmd.Wait() }, nil
	})
}

// StartWith is Start with start in place of cmd.Start, for a caller that
// starts processes its own way (the command sandbox): start runs cmd as
// rewritten here (Path, Args, ExtraFiles and SysProcAttr.Setsid included)
// and returns the leader's pid and a function reaping it, which is called
// only when the guard fails to arm. The caller then waits for the leader
// its own way.
func StartWith(cmd *exec.Cmd, start func(*exec.Cmd) (pid int, reap func(), err error)) (*Group, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil {
		return nil, errors.New("procgroup: command already started")
	}
	ours, theirs, err := socketPair()
	if err != nil {
		return nil, fmt.Errorf("cannot create the process-group guard: %w", err)
	}
	defer theirs.Close()
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, theirs)
	cmd.Args = append([]string{"sh", "-c", prologue, "procgroup", strconv.Itoa(fd), cmd.Path}, cmd.Args[1:]...)
	cmd.Path = shell
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	pid, reap, err := start(cmd)
	if err != nil {
		ours.Close()
		return nil, err
	}
	theirs.Close()
	g := &Group{pgid: pid, guard: ours}
	g.watcher, err = readPid(ours)
	if err != nil {
		// The prologue died before arming the guard; nothing of the command
		// ran. Reap the leader so no zombie is left.
		_ = syscall.Kill(-g.pgid, syscall.SIGKILL)
		reap()
		ours.Close()
		return nil, fmt.Errorf("the process-group guard did not start: %w", err)
	}
	return g, nil
}

// readPid reads the watcher's pid line, at most a few bytes.
func readPid(f *os.File) (int, error) {
	var buf [32]byte
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if i := strings.IndexByte(string(buf[:n]), '\n'); i >= 0 {
			return strconv.Atoi(string(buf[:i]))
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, errors.New("pid line too long")
}

// Pgid is the process group id, equal to the leader's pid.
func (g *Group) Pgid() int { return g.pgid }

// Signal sends sig to every process in the group. The watcher ignores the
// termination signals, so the guard survives SIGTERM; SIGKILL ends the guard
// with everything else, after which further signals are not sent.
func (g *Group) Signal(sig syscall.Signal) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.guard == nil {
		return nil
	}
	err := syscall.Kill(-g.pgid, sig)
	if sig == syscall.SIGKILL {
		g.guard.Close()
		g.guard = nil
	}
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Kill SIGKILLs the whole group, guard included.
func (g *Group) Kill() error { return g.Signal(syscall.SIGKILL) }

// Release stands the guard down if no process but the watcher is left in the
// group, and reports whether the group is finished. A group that still has
// members stays guarded.
func (g *Group) Release() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.guard == nil {
		return true
	}
	if !onlyWatcher(g.pgid, g.watcher) {
		return false
	}
	// The newline makes the watcher's read succeed, so it exits without
	// killing; a watcher already gone makes the write fail, which is fine.
	_, _ = g.guard.Write([]byte("\n"))
	g.guard.Close()
	g.guard = nil
	return true
}

// socketPair returns two connected, close-on-exec stream sockets.
func socketPair() (ours, theirs *os.File, err error) {
	// ForkLock keeps a concurrent fork from inheriting the descriptors
	// before they are marked close-on-exec: a leaked copy would keep the
	// guard from ever seeing end of file.
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "procgroup-guard"), os.NewFile(uintptr(fds[1]), "procgroup-watcher"), nil
}
