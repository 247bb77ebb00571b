package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// bufKeep bounds the encode buffer a Writer keeps between appends, so one
// huge event does not pin its size for the life of the session.
const bufKeep = 1 << 20

// Writer appends to one session log while holding its lock. It implements
// session.Sink. Append writes complete lines immediately (one write per
// call) so a killed process loses nothing it appended; Flush is the fsync
// barrier. Methods are safe for concurrent use.
type Writer struct {
	s    *Store
	id   string
	path string

	mu     sync.Mutex
	f      logFile
	lock   *sessionLock
	size   int64 // offset just past the last complete line
	next   int   // seq of the next event
	dirty  bool  // bytes written since the last fsync
	poison error // set once the log can no longer be trusted to end cleanly
	closed bool
	// discarded: the log was removed by Discard; Flush and Close are no-ops.
	discarded bool
	buf       []byte
	deltas    deltaTracker // the current step's deltas, for compaction
}

var _ session.Sink = (*Writer)(nil)

// Create starts a new session log: it validates h, refuses an id that
// already has a log, creates the directories, takes the lock, writes the
// header and the seed events atomically (temporary file, fsync, rename,
// directory fsyncs) and records a journal change. The seed must be a
// contiguous log starting at seq 0.
func (s *Store) Create(h session.Header, seed []session.Event) (*Writer, error) {
	if err := validateHeader(h, h.ID); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	buf, err := encodeHeader(h)
	if err != nil {
		return nil, fmt.Errorf("create session %s: encode header: %w", h.ID, err)
	}
	buf = append(buf, '\n')
	var deltas deltaTracker
	if buf, err = appendLines(buf, seed, 0, &deltas); err != nil {
		return nil, fmt.Errorf("create session %s: %w", h.ID, err)
	}
	// Ids are unique across workspaces. Two processes creating one id under
	// two different cwds at the same instant could both pass this check;
	// ids are random UUIDs, so only a caller reusing an id could get there.
	if p, err := s.logPath(h.ID); err == nil {
		return nil, fmt.Errorf("create session %s: %w (%s)", h.ID, ErrExists, p)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("create session %s: %w", h.ID, err)
	}
	slugDir := filepath.Join(s.root, WorkspaceSlug(h.Cwd))
	dir := filepath.Join(slugDir, h.ID)
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, fmt.Errorf("create session %s: %w", h.ID, err)
	}
	lock, err := acquireLock(filepath.Join(dir, lockName), h.ID, s.now())
	if err != nil {
		return nil, err
	}
	w, err := s.createLocked(h.ID, dir, buf, len(seed), lock)
	if err == nil {
		w.deltas = deltas
	}
	if err != nil {
		_ = lock.release()
		return nil, fmt.Errorf("create session %s: %w", h.ID, err)
	}
	return w, nil
}

func (s *Store) createLocked(id, dir string, content []byte, n int, lock *sessionLock) (*Writer, error) {
	path := filepath.Join(dir, logName)
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%w (%s)", ErrExists, path)
	}
	// Temporary files left by a create that crashed before its rename.
	stale, _ := filepath.Glob(filepath.Join(dir, ".session-*.tmp"))
	for _, p := range stale {
		_ = os.Remove(p)
	}
	if err := writeFileAtomic(dir, ".session-*.tmp", path, content); err != nil {
		return nil, err
	}
	// The new directories must survive a crash too, not only the file.
	for _, d := range []string{dir, filepath.Dir(dir), s.root} {
		if err := syncDir(d); err != nil {
			return nil, err
		}
	}
	f, err := s.openFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	s.remember(id, path)
	s.recordChange(id, path, int64(len(content)))
	return &Writer{s: s, id: id, path: path, f: f, lock: lock, size: int64(len(content)), next: n}, nil
}

// Open resumes a session for appending: it takes the lock, reads the log,
// repairs a crash (see Load) and returns a writer positioned at the end
// together with the header and every event, synthetic closers included.
func (s *Store) Open(ctx context.Context, id string) (*Writer, session.Header, []session.Event, error) {
	w, h, events, err := s.open(ctx, id)
	if err != nil {
		return nil, session.Header{}, nil, err
	}
	// Announce the writer before its first append: a reader following the
	// journal then watches this log until the writer is gone, even if it
	// dies before journaling what it appended (see drift.go).
	s.recordChange(id, w.path, w.size)
	return w, h, events, nil
}

// open takes the lock, reads and repairs the log.
func (s *Store) open(ctx context.Context, id string) (*Writer, session.Header, []session.Event, error) {
	path, err := s.logPath(id)
	if err != nil {
		return nil, session.Header{}, nil, err
	}
	lock, err := acquireLock(filepath.Join(filepath.Dir(path), lockName), id, s.now())
	if err != nil {
		return nil, session.Header{}, nil, err
	}
	w, h, events, err := s.openLocked(ctx, id, path, lock)
	if err != nil {
		_ = lock.release()
		return nil, session.Header{}, nil, err
	}
	return w, h, events, nil
}

func (s *Store) openLocked(ctx context.Context, id, path string, lock *sessionLock) (*Writer, session.Header, []session.Event, error) {
	f, fi, err := s.openLog(path, os.O_RDWR|os.O_APPEND)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, session.Header{}, nil, s.notFound(id)
	}
	if err != nil {
		return nil, session.Header{}, nil, err
	}
	d, err := readLog(ctx, f, fi.Size(), path, id)
	if err != nil {
		f.Close()
		return nil, session.Header{}, nil, err
	}
	w := &Writer{s: s, id: id, path: path, f: f, lock: lock, size: d.complete, next: len(d.events)}
	w.deltas.observeStep(d.events)
	events, err := w.repair(d)
	if err != nil {
		f.Close()
		return nil, session.Header{}, nil, err
	}
	return w, d.header, events, nil
}

// Load is the repairing read: it takes the lock (failing with LockedError
// while another writer holds it), truncates a torn tail, closes an open last
// turn as interrupted, makes the repair durable, journals it and releases
// the lock. A log that needs no repair is not modified.
func (s *Store) Load(ctx context.Context, id string) (session.Header, []session.Event, error) {
	w, h, events, err := s.open(ctx, id)
	if err != nil {
		return session.Header{}, nil, err
	}
	if err := w.Close(); err != nil {
		return session.Header{}, nil, err
	}
	return h, events, nil
}

// Append writes events as complete lines in one write. Their seqs must
// continue the log. On a failed write the file is cut back to its last
// complete line and the events count as not appended; if even that fails
// the writer is poisoned.
func (w *Writer) Append(events ...session.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	buf, err := appendLines(w.buf[:0], events, w.next, &w.deltas)
	if err != nil {
		// The tracker may have seen events that were not written.
		w.deltas.reset()
		return fmt.Errorf("append to session %s: %w", w.id, err)
	}
	if cap(buf) <= bufKeep {
		w.buf = buf
	}
	n, err := w.f.Write(buf)
	if err == nil && n != len(buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.deltas.reset()
		return w.rollback(err)
	}
	w.size += int64(n)
	w.next += len(events)
	w.dirty = true
	return nil
}

func (w *Writer) rollback(werr error) error {
	if terr := w.f.Truncate(w.size); terr != nil {
		w.poison = fmt.Errorf("%w: session %s: a failed write (%v) could not be rolled back (%v); "+
			"restart dsh to repair the log on load", ErrPoisoned, w.id, werr, terr)
		return w.poison
	}
	hint := ""
	if errors.Is(werr, syscall.ENOSPC) {
		hint = "; free some disk space and retry"
	}
	return fmt.Errorf("append to session log %s: %w (the events were not saved; the log is unchanged%s)", w.path, werr, hint)
}

// Flush makes every appended event durable (fsync), then records a journal
// change. It does nothing when nothing was appended since the last Flush.
// A failed fsync poisons the writer: after one, the kernel may already have
// dropped the unsynced pages, so a retry could falsely succeed.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.discarded {
		return nil
	}
	if err := w.usable(); err != nil {
		return err
	}
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if !w.dirty {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		w.poison = fmt.Errorf("%w: session %s: fsync of %s failed: %v; "+
			"events since the last flush may be lost, restart dsh to reload the log", ErrPoisoned, w.id, w.path, err)
		return w.poison
	}
	w.dirty = false
	w.s.recordChange(w.id, w.path, w.size)
	return nil
}

// Close flushes, closes the file and releases the lock. It is idempotent;
// the lock is released even when the flush fails.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	var ferr error
	if w.poison != nil {
		ferr = w.poison
	} else {
		ferr = w.flushLocked()
	}
	w.closed = true
	cerr := w.f.Close()
	lerr := w.lock.release()
	return errors.Join(ferr, cerr, lerr)
}

// Path returns the log's path.
func (w *Writer) Path() string { return w.path }

// ID returns the session id.
func (w *Writer) ID() string { return w.id }

func (w *Writer) usable() error {
	if w.closed {
		return fmt.Errorf("session %s: log writer is closed", w.id)
	}
	return w.poison
}

// appendLines encodes events as newline-terminated lines; their seqs must
// run from next. A string that repeats a block's deltas is written as a
// reference to them (deltas.go); deltas follows the events written.
func appendLines(buf []byte, events []session.Event, next int, deltas *deltaTracker) ([]byte, error) {
	for i, e := range events {
		if e.Seq != next+i {
			return buf, fmt.Errorf("event seq %d out of order (expected %d)", e.Seq, next+i)
		}
		if e.Type == "" {
			return buf, fmt.Errorf("event %d has no type", e.Seq)
		}
		line, err := e.MarshalLine()
		if err != nil {
			return buf, fmt.Errorf("encode event %d (%s): %w", e.Seq, e.Type, err)
		}
		if len(line) > MaxEventBytes {
			return buf, fmt.Errorf("event %d (%s) is %d MiB, over the %d MiB limit of one event; it was not saved",
				e.Seq, e.Type, len(line)>>20, MaxEventBytes>>20)
		}
		if data, refs := deltas.compact(e); refs != nil {
			c := e
			c.Data = data
			if line, err = c.MarshalLine(); err == nil {
				line, err = appendRefs(line, refs)
			}
			if err != nil {
				return buf, fmt.Errorf("encode event %d (%s): %w", e.Seq, e.Type, err)
			}
		}
		deltas.observe(e)
		buf = append(buf, line...)
		buf = append(buf, '\n')
	}
	return buf, nil
}

// writeFileAtomic writes content to a new temporary file in dir, fsyncs it
// and renames it to path, so readers see either nothing or everything.
func writeFileAtomic(dir, pattern, path string, content []byte) error {
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, werr := tmp.Write(content)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		_ = os.Remove(name)
		return err
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// ErrNotEmpty is returned by Discard for a log that holds events.
var ErrNotEmpty = errors.New("session log is not empty")

// Discard removes a log that holds only its header — a session that was
// opened but never used — and releases the lock. A log with any event is
// left untouched and ErrNotEmpty is returned (the writer stays open).
// Nothing is lost: the removed file holds no event. Afterwards Flush and
// Close do nothing, so the session's Live can still be closed normally.
func (w *Writer) Discard() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	if w.next != 0 {
		return fmt.Errorf("discard session %s: %w", w.id, ErrNotEmpty)
	}
	dir := filepath.Dir(w.path)
	err := os.Remove(w.path)
	w.closed, w.discarded = true, true
	err = errors.Join(err, w.f.Close(), os.Remove(filepath.Join(dir, lockName)), w.lock.release(), os.Remove(dir))
	// The workspace directory goes too when this was its only session.
	_ = os.Remove(filepath.Dir(dir))
	w.s.recordChange(w.id, w.path, 0)
	if err != nil {
		return fmt.Errorf("discard empty session %s: %w", w.id, err)
	}
	return nil
}
