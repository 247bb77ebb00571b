//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// zygoteBox is a box whose sandbox starts commands through zygotes.
func zygoteBox(t *testing.T) (*box, *landlockSandbox) {
	t.Helper()
	b := newBox(t)
	s, ok := b.sb.(*landlockSandbox)
	if !ok || !s.Support().Available {
		t.Fatalf("these tests need Landlock: %+v", b.sb.Support())
	}
	// Nothing hidden: a hidden path below the busy /tmp makes the rules
	// list /tmp's entries, which other tests' temporary directories change
	// between any two commands, and a zygote is replaced whenever its rules
	// go stale.
	b.policy.Hidden = nil
	return b, s
}

func (s *landlockSandbox) liveZygotes() []*zygote {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*zygote(nil), s.zygotes...)
}

// ppid runs "echo $PPID" under p and returns the command's parent.
func (b *box) ppid(t *testing.T, p Policy) (string, Report) {
	t.Helper()
	out, code, rep, err := b.run(t, p, "echo $PPID")
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v, output %q", code, err, out)
	}
	return strings.TrimSpace(out), rep
}

func TestZygoteServesTheCommandsOfAPolicy(t *testing.T) {
	b, s := zygoteBox(t)
	first, rep := b.ppid(t, b.policy)
	second, _ := b.ppid(t, b.policy)
	if first != second || first == fmt.Sprint(os.Getpid()) || !rep.Zygote {
		t.Fatalf("parents %s and %s (dsh is %d), report %+v: want one zygote for both", first, second, os.Getpid(), rep)
	}
	on := b.policy
	on.Network = true
	third, _ := b.ppid(t, on)
	if third == first || len(s.liveZygotes()) != 2 {
		t.Fatalf("another policy shares the zygote %s (%d zygotes)", third, len(s.liveZygotes()))
	}
	// Exit statuses and signals come back as they are.
	if _, code, _, _ := b.run(t, b.policy, "exit 3"); code != 3 {
		t.Fatalf("exit 3 gave %d", code)
	}
	if _, code, _, _ := b.run(t, b.policy, "kill -KILL $$"); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("a killed shell gave %d", code)
	}
}

func TestZygoteRunsCommandsConcurrently(t *testing.T) {
	b, _ := zygoteBox(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			cmd := exec.Command(bash, "-c", fmt.Sprintf("echo out %d; echo err %d >&2; exit %d", i, i, i))
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			proc, err := b.sb.Start(cmd, b.policy)
			if err != nil {
				errs <- err
				return
			}
			ws, err := proc.Wait()
			if err != nil || ws.ExitStatus() != i || out.String() != fmt.Sprintf("out %d\n", i) || stderr.String() != fmt.Sprintf("err %d\n", i) {
				errs <- fmt.Errorf("command %d: status %d, %v, stdout %q, stderr %q", i, ws.ExitStatus(), err, out.String(), stderr.String())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestZygoteIsReplacedWhenItsRulesGoStale(t *testing.T) {
	b, s := zygoteBox(t)
	before, _ := b.ppid(t, b.policy)
	// The workspace root keeps .git read-only, so its entries are allowed
	// one by one: a file the write tool makes there afterwards is only
	// writable by commands whose rules were built after it existed.
	write(t, filepath.Join(b.ws, "made-by-dsh.txt"), "v1\n")
	out, code, _, err := b.run(t, b.policy, "echo v2 >> made-by-dsh.txt && echo $PPID")
	if err != nil || code != 0 {
		t.Fatalf("writing a root file made after the zygote started: exit %d, %v, output %q", code, err, out)
	}
	if after := strings.TrimSpace(out); after == before {
		t.Fatalf("the stale zygote %s ran the command", before)
	}
	if zs := s.liveZygotes(); len(zs) != 1 {
		t.Fatalf("%d zygotes left, want only the new one", len(zs))
	}
}

func TestZygoteCommandKeepsItsSessionAndSignals(t *testing.T) {
	b, _ := zygoteBox(t)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	cmd := exec.Command("/bin/sh", "-c", "echo ready; read line; echo never")
	cmd.Dir = b.ws
	cmd.Stdin, cmd.Stdout = inR, outW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	proc, err := b.sb.Start(cmd, b.policy)
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	pid := proc.Pid()
	if sid, err := unix.Getsid(pid); err != nil || sid != pid {
		t.Fatalf("session of %d is %d, %v; want its own", pid, sid, err)
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ws, err := proc.Wait()
	if err != nil || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("status %v, %v; want killed by SIGTERM", ws, err)
	}
}

func TestZygoteDeathEndsItsCommands(t *testing.T) {
	b, s := zygoteBox(t)
	b.ppid(t, b.policy) // starts the zygote
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	cmd := exec.Command("/bin/sh", "-c", "echo ready; exec cat")
	cmd.Dir = b.ws
	cmd.Stdout = outW
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	cmd.Stdin = inR
	proc, err := b.sb.Start(cmd, b.policy)
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(outR)
	if line, err := rd.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	zs := s.liveZygotes()
	if len(zs) != 1 {
		t.Fatalf("%d zygotes", len(zs))
	}
	if err := zs[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := proc.Wait(); err == nil {
		t.Fatal("Wait succeeded though the zygote died first")
	}
	// The command died with it: its output reaches end of file.
	if rest, err := io.ReadAll(rd); err != nil || len(rest) != 0 {
		t.Fatalf("after the zygote died: %q, %v", rest, err)
	}
	// The next command gets a new zygote.
	if _, rep := b.ppid(t, b.policy); !rep.Zygote {
		t.Fatalf("report %+v", rep)
	}
}

func TestZygotesAreBoundedAndClosed(t *testing.T) {
	b, s := zygoteBox(t)
	s.maxZygotes = 2
	policies := make([]Policy, 3)
	for i := range policies {
		policies[i] = b.policy
		policies[i].Write = append([]string{}, b.policy.Write...)
		extra := filepath.Join(b.tmp, fmt.Sprint("extra", i))
		if err := os.Mkdir(extra, 0o755); err != nil {
			t.Fatal(err)
		}
		policies[i].Write = append(policies[i].Write, extra)
	}
	for _, p := range policies {
		b.ppid(t, p)
	}
	if n := len(s.liveZygotes()); n != 2 {
		t.Fatalf("%d zygotes for 3 policies, want the bound of 2", n)
	}

	// Two busy zygotes: a third policy's command gets a fresh launcher.
	var stop []*os.File
	for _, p := range policies[:2] {
		inR, inW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", "-c", "read line")
		cmd.Dir, cmd.Stdin = b.ws, inR
		proc, err := b.sb.Start(cmd, p)
		inR.Close()
		if err != nil {
			t.Fatal(err)
		}
		stop = append(stop, inW)
		defer proc.Wait()
	}
	if _, rep := b.ppid(t, policies[2]); rep.Zygote {
		t.Fatalf("with every zygote busy the command went to a zygote: %+v", rep)
	}
	for _, w := range stop {
		w.Close()
	}

	zs := s.liveZygotes()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, z := range zs {
		if !z.dead() {
			t.Fatalf("zygote %d outlived Close", z.cmd.Process.Pid)
		}
	}
	if _, err := s.Start(exec.Command("/bin/true"), b.policy); err == nil {
		t.Fatal("Start succeeded after Close")
	}
}

func TestZygoteIsWhollyInsideTheSandbox(t *testing.T) {
	b, s := zygoteBox(t)
	// No descriptor of the zygote's (its control or request sockets) may
	// reach a command.
	out, code, _, err := b.run(t, b.policy, "ls -l /proc/$$/fd/")
	if err != nil || code != 0 || strings.Contains(out, "socket:") {
		t.Fatalf("exit %d, %v; the command's descriptors:\n%s", code, err, out)
	}
	zs := s.liveZygotes()
	if len(zs) != 1 {
		t.Fatalf("%d zygotes", len(zs))
	}
	// Every thread of the zygote runs under the sandbox, not only the one
	// that forks: each has no_new_privs and the socket filter.
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", zs[0].cmd.Process.Pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("threads of the zygote: %v, %v", tasks, err)
	}
	for _, task := range tasks {
		st, err := os.ReadFile(task)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(st), "NoNewPrivs:\t1") || !strings.Contains(string(st), "Seccomp:\t2") {
			t.Fatalf("%s is not restricted:\n%s", task, st)
		}
	}
}

func TestAStoppedZygoteIsReplacedNotWaitedFor(t *testing.T) {
	b, s := zygoteBox(t)
	// only returns the one zygote, after shortening the bound on the
	// answers it owes: it never answers, so the bound only sets how long
	// the test waits. New zygotes keep the default bound, which a loaded
	// machine needs.
	only := func() *zygote {
		t.Helper()
		zs := s.liveZygotes()
		if len(zs) != 1 {
			t.Fatalf("%d zygotes", len(zs))
		}
		zs[0].replyTimeout = 50 * time.Millisecond
		return zs[0]
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	first, _ := b.ppid(t, b.policy)
	// A command stops its zygote (they share a Landlock domain, so the
	// signal is allowed), waits until it is stopped, and exits: the
	// zygote cannot report the status. It does report the command's pid,
	// under the default bound (on a loaded machine that took more than
	// 50 ms); the short one is for the status it owes.
	cmd := exec.Command(bash, "-c", `kill -STOP $PPID; until [ "$(cut -d' ' -f3 /proc/$PPID/stat)" = T ]; do :; done; exit 4`)
	cmd.Dir = b.ws
	proc, err := b.sb.Start(cmd, b.policy)
	if err != nil {
		t.Fatal(err)
	}
	only()
	if _, err := proc.Wait(); err == nil {
		t.Fatal("Wait returned a status the stopped zygote cannot have sent")
	}
	// The next command gets a new zygote.
	second, _ := b.ppid(t, b.policy)
	if second == first {
		t.Fatalf("the stopped zygote %s ran the next command", first)
	}

	// A zygote stopped from outside misses the pid it owes: the command
	// goes to a new one.
	z := only()
	if err := syscall.Kill(z.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	third, rep := b.ppid(t, b.policy)
	if third == second || !rep.Zygote {
		t.Fatalf("the stopped zygote %s ran the command (now %s, report %+v)", second, third, rep)
	}
	select {
	case <-z.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the stopped zygote was not killed")
	}
}
