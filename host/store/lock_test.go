package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// helperHoldLock opens a session, reports "locked" and holds the lock until
// its stdin closes.
func helperHoldLock(root, id string) error {
	s := New(root, Options{})
	w, _, _, err := s.Open(context.Background(), id)
	if err != nil {
		return err
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return w.Close()
}

// startHelper re-executes the test binary in a helper mode.
func startHelper(t *testing.T, mode string, env ...string) (*exec.Cmd, io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, bufio.NewScanner(stdout)
}

func TestSecondWriterInSameProcessIsLocked(t *testing.T) {
	fx := newFixture(t, Options{Now: func() time.Time { return time.UnixMilli(1700000000000) }})
	w := mustCreate(t, fx.s, testHeader("s-lock"))
	_, _, _, err := fx.s.Open(t.Context(), "s-lock")
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second Open err = %v, want LockedError", err)
	}
	if le.PID != os.Getpid() || le.ID != "s-lock" || !strings.Contains(le.Error(), "in this process") {
		t.Errorf("LockedError = %+v (%v)", le, le)
	}
	if !le.Since.Equal(time.UnixMilli(1700000000000)) {
		t.Errorf("Since = %v", le.Since)
	}
	if _, _, err := fx.s.Load(t.Context(), "s-lock"); !errors.As(err, &le) {
		t.Errorf("Load while locked err = %v, want LockedError", err)
	}
	if _, _, err := fx.s.Inspect(t.Context(), "s-lock"); err != nil {
		t.Errorf("Inspect needs no lock: %v", err)
	}
	mustClose(t, w)
	w2, _, _, err := fx.s.Open(t.Context(), "s-lock")
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	mustClose(t, w2)
}

func TestCreateRacingAnotherCreateIsLocked(t *testing.T) {
	fx := newFixture(t, Options{})
	h := testHeader("s-race")
	dir := filepath.Join(fx.root, WorkspaceSlug(h.Cwd), h.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The other creator holds the lock and has not renamed its log in yet.
	l, err := acquireLock(filepath.Join(dir, lockName), h.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var le *LockedError
	if _, err := fx.s.Create(h, nil); !errors.As(err, &le) {
		t.Fatalf("Create err = %v, want LockedError", err)
	}
	if err := l.release(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, mustCreate(t, fx.s, h))
}

func TestWriterInAnotherProcessIsReportedByPID(t *testing.T) {
	fx := newFixture(t, Options{})
	mustClose(t, mustCreate(t, fx.s, testHeader("s-child")))
	cmd, stdin, out := startHelper(t, "lock", "DSH_STORE_ROOT="+fx.root, "DSH_STORE_ID=s-child")
	if !out.Scan() || out.Text() != "locked" {
		t.Fatalf("child did not take the lock: %q %v", out.Text(), cmd.Wait())
	}

	_, _, _, err := fx.s.Open(t.Context(), "s-child")
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("Open err = %v, want LockedError", err)
	}
	if le.PID != cmd.Process.Pid || le.Since.IsZero() {
		t.Errorf("LockedError = %+v, want pid %d and a time", le, cmd.Process.Pid)
	}
	msg := le.Error()
	if !strings.Contains(msg, fmt.Sprintf("pid %d", cmd.Process.Pid)) || !strings.Contains(msg, "close that dsh") {
		t.Errorf("message %q must name the pid and say what to do", msg)
	}
	if _, err := fx.s.Create(testHeader("s-child"), nil); !errors.Is(err, ErrExists) {
		t.Errorf("Create of a locked existing session err = %v, want ErrExists", err)
	}
	if entries, err := fx.s.List(t.Context()); err != nil || len(entries) != 1 {
		t.Errorf("List while another process writes = %v, %v", entries, err)
	}

	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	w, _, _, err := fx.s.Open(t.Context(), "s-child")
	if err != nil {
		t.Fatalf("Open after the child exited: %v", err)
	}
	mustClose(t, w)
}
