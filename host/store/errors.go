package store

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrNotFound reports that no log exists for a session id. Errors returned
// for a missing session wrap it; test with errors.Is.
var ErrNotFound = errors.New("session not found")

// ErrExists reports that Create was asked for an id that already has a log.
var ErrExists = errors.New("session already exists")

// ErrPoisoned marks a Writer that can no longer guarantee its log ends with a
// complete line (a failed write could not be rolled back, or fsync failed).
// Every later Append and Flush returns an error wrapping it.
var ErrPoisoned = errors.New("session log writer is unusable")

// CorruptError reports a log that cannot be read without losing data: a
// complete line that is not a valid event (bad JSON, wrong seq, bad envelope)
// or a missing, truncated or invalid header (Line 1), or a line over
// MaxEventBytes. Line is 1-based; 0 means the file as a whole, which is not
// a regular file (a directory, FIFO, socket or device).
type CorruptError struct {
	Path string
	Line int
	Err  error
}

func (e *CorruptError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("session log %s is unreadable: it %v; move it aside, then retry", e.Path, e.Err)
	}
	return fmt.Sprintf("session log %s is corrupt at line %d: %v; "+
		"move the file aside or fix that line, then retry", e.Path, e.Line, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// LockedError reports that another writer (in this process or another one)
// holds a session's log. PID is the holder's process id, 0 when unknown.
type LockedError struct {
	ID    string
	Path  string
	PID   int
	Since time.Time // when the holder took the lock; zero when unknown
}

func (e *LockedError) Error() string {
	switch {
	case e.PID == os.Getpid():
		return fmt.Sprintf("session %s is already open for writing in this process; "+
			"close the other writer before opening it again", e.ID)
	case e.PID > 0 && !e.Since.IsZero():
		return fmt.Sprintf("session %s is in use by another dsh process (pid %d, since %s); "+
			"close that dsh or wait for it to finish, then retry",
			e.ID, e.PID, e.Since.Format(time.DateTime))
	case e.PID > 0:
		return fmt.Sprintf("session %s is in use by another dsh process (pid %d); "+
			"close that dsh or wait for it to finish, then retry", e.ID, e.PID)
	default:
		return fmt.Sprintf("session %s is in use by another dsh process; "+
			"close that dsh or wait for it to finish, then retry", e.ID)
	}
}

// JournalResetError reports that the change journal no longer continues the
// cursor a reader holds (it was deleted, truncated, replaced or damaged).
// The reader must fall back to a full List; Next is the cursor to follow
// from afterwards (take it before listing, so nothing written meanwhile is
// missed).
type JournalResetError struct {
	Path   string
	Next   int64
	Reason string
}

func (e *JournalResetError) Error() string {
	return fmt.Sprintf("change journal %s was reset (%s); list all sessions again", e.Path, e.Reason)
}
