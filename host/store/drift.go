package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A reader that keeps a catalog of the logs (the search index) follows the
// change journal, but the journal only hears about dsh's own writes, and
// only after them. The calls below let such a reader notice the rest at a
// cost proportional to the number of workspaces or of open writers, never
// to the number of logs:
//
//   - WorkspaceStamps: a session created or removed behind dsh's back (a log
//     copied in, a session directory deleted) changes the modification time
//     of its workspace directory (and a new workspace that of the root).
//   - WorkspaceSessions: the ids under one workspace directory, to compare
//     with the catalog when its stamp changed.
//   - WriterRunning: a writer that died between an Append and the journal
//     record of its Flush leaves bytes no record announces. Every writer
//     journals a record as soon as it holds the lock (Create and Open), so a
//     reader learns of every writer; while WriterRunning reports the writer
//     alive, its next Flush will journal; once it reports false, the log is
//     final and the reader looks at it once more.
//   - RevisionAt: the revision of a log by path, one stat, for a bounded
//     re-verification of logs edited in place.

// DirStamp is a directory's name (relative to the root; "" for the root)
// and modification time in nanoseconds.
type DirStamp struct {
	Name    string
	ModTime int64
}

// WorkspaceStamps returns the root's stamp followed by one per workspace
// directory. A missing root has no stamps.
func (s *Store) WorkspaceStamps() ([]DirStamp, error) {
	fi, err := os.Stat(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stat sessions root %s: %w", s.root, err)
	}
	out := []DirStamp{{Name: "", ModTime: fi.ModTime().UnixNano()}}
	slugs, err := os.ReadDir(s.root)
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", s.root, err)
	}
	for _, slug := range slugs {
		if !slug.IsDir() {
			continue
		}
		info, err := slug.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("stat %s: %w", filepath.Join(s.root, slug.Name()), err)
		}
		out = append(out, DirStamp{Name: slug.Name(), ModTime: info.ModTime().UnixNano()})
	}
	return out, nil
}

// WorkspaceSessions returns the ids of the session directories under one
// workspace directory: one directory read, no stat or read of any log
// (on the large benchmark's workspaces of ~850 sessions, a stat of each
// log tripled the cost). A directory whose log is not there (a Create
// between its mkdir and its log, a log deleted from its directory) is
// listed too: looking its id up finds no log.
func (s *Store) WorkspaceSessions(slug string) ([]string, error) {
	if slug == "" || slug != filepath.Base(slug) || slug[0] == '.' {
		return nil, fmt.Errorf("invalid workspace directory name %q", slug)
	}
	dir := filepath.Join(s.root, slug)
	ids, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", dir, err)
	}
	var out []string
	for _, d := range ids {
		id := d.Name()
		if d.IsDir() && validateID(id) == nil {
			out = append(out, id)
		}
	}
	return out, nil
}

// WorkspaceOf returns the workspace directory name of a log path under
// this store, or "" when the path is not a log of this store.
func (s *Store) WorkspaceOf(path string) string {
	rel, err := filepath.Rel(s.root, path)
	if err != nil {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) != 3 || parts[2] != logName || parts[0] == ".." {
		return ""
	}
	return parts[0]
}

// RevisionAt returns the revision and size of the log at path (as in
// Entry) with a single stat; fs.ErrNotExist when it is gone.
func (s *Store) RevisionAt(path string) (string, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	return s.revision(fi), fi.Size(), nil
}

// WriterRunning reports whether the lock of the log at path is held, or may
// still be held, by a running process: the lock's owner record names a
// process that exists. A released lock has an empty record; a writer that
// died leaves the record of a process that is gone. A reused process id can
// only make this report true for longer, never false too early.
func (s *Store) WriterRunning(path string) bool {
	b, err := readLockRecord(filepath.Join(filepath.Dir(path), lockName))
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return false
	}
	var o lockOwner
	if json.Unmarshal(bytes.TrimSpace(b), &o) != nil || o.PID <= 0 {
		// An owner record being written right now, or a foreign one.
		return true
	}
	if o.PID == os.Getpid() {
		return true
	}
	err = unix.Kill(o.PID, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// readLockRecord reads a lock file's owner record without ever blocking (a
// FIFO planted as session.lock must not hang a reader) and without reading
// more than a record can hold.
func readLockRecord(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("session lock %s is not a regular file", path)
	}
	return io.ReadAll(io.LimitReader(f, 4096))
}
