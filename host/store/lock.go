package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

const lockName = "session.lock"

// sessionLock is an advisory flock on <dir>/session.lock. flock locks belong
// to the open file description, so a second acquire conflicts even inside
// the same process, and the kernel drops the lock when the holder dies.
// The file is never removed: unlinking a lock file lets two processes lock
// two different inodes.
type sessionLock struct {
	f *os.File
}

// lockOwner is the lock file's content, for LockedError messages only.
type lockOwner struct {
	PID   int   `json:"pid"`
	Since int64 `json:"since"`
}

func acquireLock(path, id string, now time.Time) (*sessionLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open session lock %s: %w", path, err)
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		owner := readOwner(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			le := &LockedError{ID: id, Path: path, PID: owner.PID}
			if owner.Since > 0 {
				le.Since = time.UnixMilli(owner.Since)
			}
			return nil, le
		}
		return nil, fmt.Errorf("lock session %s (%s): %w", id, path, err)
	}
	rec, _ := session.Marshal(lockOwner{PID: os.Getpid(), Since: now.UnixMilli()})
	if err := f.Truncate(0); err == nil {
		// The owner record is advisory; a failure to write it only makes a
		// later LockedError less specific.
		_, _ = f.WriteAt(append(rec, '\n'), 0)
	}
	return &sessionLock{f: f}, nil
}

// release clears the owner record and drops the lock. Clearing happens while
// the lock is still held so it can never erase a new holder's record.
func (l *sessionLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	_ = f.Truncate(0)
	uerr := flock(f, unix.LOCK_UN)
	cerr := f.Close()
	if uerr != nil {
		return fmt.Errorf("unlock %s: %w", f.Name(), uerr)
	}
	return cerr
}

func readOwner(f *os.File) lockOwner {
	var o lockOwner
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 4096))
	if err == nil {
		_ = json.Unmarshal(b, &o)
	}
	return o
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if !errors.Is(ferr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
