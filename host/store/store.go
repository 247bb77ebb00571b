package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

const (
	logName       = "session.jsonl"
	noWorkspace   = "no-workspace"
	dirPerm       = 0o700
	filePerm      = 0o600
	maxSlugPrefix = 48
)

// Options configures a Store. The zero value is usable.
type Options struct {
	Now func() time.Time // nil: time.Now; stamps lock ownership records
	Log *slog.Logger     // nil: slog.Default()

	// openFile opens session logs. Tests replace it to inject failing
	// writes, fsyncs and truncates, or to count the bytes a read touches.
	openFile func(name string, flag int, perm os.FileMode) (logFile, error)
}

// logFile is the part of *os.File the store uses on a session log.
type logFile interface {
	io.ReaderAt
	io.Writer
	Truncate(size int64) error
	Sync() error
	Stat() (os.FileInfo, error)
	Close() error
}

// Store is a sessions root on the local file system. It holds no open files
// itself; Writers do. Its methods are safe for concurrent use.
type Store struct {
	root     string
	now      func() time.Time
	log      *slog.Logger
	openFile func(name string, flag int, perm os.FileMode) (logFile, error)

	mu    sync.Mutex
	paths map[string]string // session id -> log path, a cache re-validated on use
	// headers caches each listed log's header by path and file identity: a
	// header line never changes while the file keeps its inode (logs only
	// grow; a new log is a new file), so a later List stats instead of
	// opening and parsing every log.
	headers map[string]cachedHeader
	// warned holds, by path, the error List last warned about for each
	// unreadable log, so a broken file costs one warning, not one per List.
	warned map[string]string
}

type cachedHeader struct {
	dev, ino uint64
	size     int64
	header   session.Header
}

// Entry describes one persisted session from its header line and file
// metadata.
type Entry struct {
	Header session.Header
	Path   string
	// Revision changes whenever the log's bytes change and is qualified by
	// the store root, so two stores holding the same id never share one.
	Revision string
	Size     int64
}

// New returns a store rooted at root (the sessions directory). The root is
// created lazily by the first Create.
func New(root string, opts Options) *Store {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	s := &Store{root: root, now: opts.Now, log: opts.Log, openFile: opts.openFile, paths: map[string]string{}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.openFile == nil {
		s.openFile = func(name string, flag int, perm os.FileMode) (logFile, error) {
			return os.OpenFile(name, flag, perm)
		}
	}
	return s
}

// Root returns the absolute sessions directory.
func (s *Store) Root() string { return s.root }

// WorkspaceSlug is the directory grouping the sessions of one workspace: a
// filesystem-safe rendering of the cwd's last element, "-", and the first 12
// hex digits of sha256(cwd); "no-workspace" without a cwd. The header's cwd
// stays the truth; the slug only groups.
func WorkspaceSlug(cwd *string) string {
	if cwd == nil {
		return noWorkspace
	}
	sum := sha256.Sum256([]byte(*cwd))
	return slugName(filepath.Base(*cwd)) + "-" + hex.EncodeToString(sum[:6])
}

func slugName(base string) string {
	var b strings.Builder
	dash := false
	for _, r := range base {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= maxSlugPrefix {
			break
		}
	}
	name := strings.Trim(b.String(), "-.")
	if name == "" {
		return "workspace"
	}
	return name
}

// List returns every persisted session, reading only each log's first line.
// A log whose header is unreadable or invalid, or that is not a regular
// file, is skipped with a warning (once per Store until its error changes;
// Stat and Inspect of its id still report the CorruptError), so one broken
// file never hides the others; a second log claiming an id already listed is
// skipped the same way. Other I/O errors fail the whole listing, because a
// partial listing would look like deletions to an index.
//
// The logs are found in directory order and their headers read on up to
// listWorkers goroutines; everything after (warnings, duplicates, the
// order of the result) is decided in that order, as if read one by one.
func (s *Store) List(ctx context.Context) ([]Entry, error) {
	found, err := s.listPaths(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	prev, prevWarned := s.headers, s.warned
	s.mu.Unlock()
	stats := make([]listed, len(found))
	if err := s.statAll(ctx, found, stats, prev); err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(stats))
	seen := make(map[string]string, len(stats))
	next := make(map[string]cachedHeader, len(stats))
	warned := map[string]string{}
	defer func() {
		s.mu.Lock()
		s.headers, s.warned = next, warned
		s.mu.Unlock()
	}()
	for i, l := range stats {
		path, id := found[i].path, found[i].id
		var ce *CorruptError
		switch err := l.err; {
		case errors.Is(err, fs.ErrNotExist):
			continue // a create that never completed, or a concurrent delete
		case errors.As(err, &ce):
			if msg := err.Error(); prevWarned[path] != msg {
				s.log.Warn("skipping unreadable session log", "path", path, "err", err)
			}
			warned[path] = err.Error()
			continue
		case err != nil:
			return nil, err
		}
		if l.cached {
			next[path] = l.cache
		}
		if first, dup := seen[id]; dup {
			s.log.Warn("skipping second log for the same session id", "id", id, "path", path, "listed", first)
			continue
		}
		seen[id] = path
		s.remember(id, path) // what reads it next (Inspect, Stat) need not look for it
		out = append(out, l.entry)
	}
	return out, nil
}

// foundLog is one log List found: its path and the session id its
// directory names.
type foundLog struct{ path, id string }

// listed is what listStat made of one found log.
type listed struct {
	entry  Entry
	cache  cachedHeader // what the next listing's cache holds for the log,
	cached bool         // if anything
	err    error
}

// listPaths walks the sessions root: every <slug>/<id>/session.jsonl
// whose id directory has a valid id, in directory order.
func (s *Store) listPaths(ctx context.Context) ([]foundLog, error) {
	slugs, err := os.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", s.root, err)
	}
	var found []foundLog
	for _, slug := range slugs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !slug.IsDir() {
			continue
		}
		dir := filepath.Join(s.root, slug.Name())
		ids, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list sessions in %s: %w", dir, err)
		}
		for _, idDir := range ids {
			id := idDir.Name()
			if !idDir.IsDir() || validateID(id) != nil {
				continue
			}
			found = append(found, foundLog{path: filepath.Join(dir, id, logName), id: id})
		}
	}
	return found, nil
}

// listWorkers bounds the goroutines that read headers for one List. A
// header read is an open, a stat, a read and a close: on a large history
// (tens of thousands of logs a first listing reads) it is syscalls and
// page-cache copies, which this many goroutines overlap across CPUs.
const listWorkers = 8

// listChunk is how many logs a worker claims at a time.
const listChunk = 64

// statAll runs listStat for every found log into out (by position), on
// up to listWorkers goroutines, and returns the context's error if it was
// cancelled meanwhile.
func (s *Store) statAll(ctx context.Context, found []foundLog, out []listed, prev map[string]cachedHeader) error {
	workers := min(listWorkers, (len(found)+listChunk-1)/listChunk)
	var claimed atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			start := int(claimed.Add(listChunk)) - listChunk
			if start >= len(found) {
				return
			}
			for i := start; i < min(start+listChunk, len(found)); i++ {
				out[i] = s.listStat(found[i].path, found[i].id, prev)
			}
		}
	}
	if workers <= 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(work)
		}
		wg.Wait()
	}
	return ctx.Err()
}

// listStat is stat with the header cache prev: a log whose file identity
// matches the cached one is only stat-ed; any other is opened and its
// header read (one stat fewer when nothing is cached for its path, as on a
// process's first listing).
func (s *Store) listStat(path, id string, prev map[string]cachedHeader) listed {
	if c, hit := prev[path]; hit {
		fi, err := os.Stat(path)
		if err != nil {
			return listed{err: err}
		}
		// A log that shrank was truncated (a repair, or a rewrite outside
		// the append-only contract): read its header again.
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && c.dev == uint64(st.Dev) && c.ino == st.Ino && fi.Size() >= c.size && fi.Mode().IsRegular() {
			c.size = fi.Size()
			return listed{entry: Entry{Header: c.header.Clone(), Path: path, Revision: s.revision(fi), Size: fi.Size()}, cache: c, cached: true}
		}
	}
	e, fi, err := s.statLog(path, id)
	if err != nil {
		return listed{err: err}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return listed{entry: e}
	}
	return listed{entry: e, cache: cachedHeader{dev: uint64(st.Dev), ino: st.Ino, size: e.Size, header: e.Header.Clone()}, cached: true}
}

// Stat returns the entry of one session, reading only its first line.
func (s *Store) Stat(ctx context.Context, id string) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	path, err := s.logPath(id)
	if err != nil {
		return Entry{}, err
	}
	e, err := s.stat(path, id)
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, s.notFound(id)
	}
	return e, err
}

func (s *Store) stat(path, id string) (Entry, error) {
	e, _, err := s.statLog(path, id)
	return e, err
}

// statLog is stat also returning the opened file's metadata.
func (s *Store) statLog(path, id string) (Entry, os.FileInfo, error) {
	f, fi, err := s.openLog(path, os.O_RDONLY)
	if err != nil {
		return Entry{}, nil, err
	}
	defer f.Close()
	h, err := readHeader(f, fi.Size(), path, id)
	if err != nil {
		return Entry{}, nil, err
	}
	return Entry{Header: h, Path: path, Revision: s.revision(fi), Size: fi.Size()}, fi, nil
}

// Inspect reads a whole log without changing it or taking its lock: every
// complete line, ignoring bytes after the last newline (a crash's leftovers
// or another process's write in progress). It never synthesizes events.
func (s *Store) Inspect(ctx context.Context, id string) (session.Header, []session.Event, error) {
	if err := ctx.Err(); err != nil {
		return session.Header{}, nil, err
	}
	path, err := s.logPath(id)
	if err != nil {
		return session.Header{}, nil, err
	}
	f, fi, err := s.openLog(path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return session.Header{}, nil, s.notFound(id)
	}
	if err != nil {
		return session.Header{}, nil, err
	}
	defer f.Close()
	d, err := readLog(ctx, f, fi.Size(), path, id)
	if err != nil {
		return session.Header{}, nil, err
	}
	return d.header, d.events, nil
}

// InspectRecovered is Inspect plus, when the log's last turn is open and no
// running process holds its lock (the writer crashed), the events a repair
// will append when it is resumed (see Load): the turn's closers and, for a
// model stream the crash cut off, the interrupted assistant message with
// what was streamed. They are numbered and stamped exactly as the repair
// writes them, but never written, so what a crashed session showed is in
// its transcript and searchable before anyone resumes it. A log whose
// writer may still run is returned as Inspect returns it.
func (s *Store) InspectRecovered(ctx context.Context, id string) (session.Header, []session.Event, error) {
	h, events, err := s.Inspect(ctx, id)
	if err != nil || len(events) == 0 {
		return h, events, err
	}
	closers := closeOpenTurn(id, events)
	if len(closers) == 0 {
		return h, events, nil
	}
	path, err := s.logPath(id)
	if err != nil || s.WriterRunning(path) {
		return h, events, nil
	}
	return h, append(events, closers...), nil
}

// openLog opens a session log without ever blocking: O_NONBLOCK makes
// opening a FIFO or a device return at once (a plain open of a FIFO waits
// for a writer forever), and anything but a regular file is then refused
// as a CorruptError, so it is skipped like any other unreadable log.
func (s *Store) openLog(path string, flag int) (logFile, os.FileInfo, error) {
	f, err := s.openFile(path, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		// Opening a socket fails (ENXIO); say what is there instead.
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, nil, &CorruptError{Path: path, Err: fmt.Errorf("is %s, not a regular file", confine.Kind(fi.Mode()))}
		}
		return nil, nil, fmt.Errorf("open session log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat session log %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &CorruptError{Path: path, Err: fmt.Errorf("is %s, not a regular file", confine.Kind(fi.Mode()))}
	}
	return f, fi, nil
}

// revision renders <root>#<size>:<mtime ns>:<inode>.
func (s *Store) revision(fi os.FileInfo) string {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("%s#%d:%d:%d", s.root, fi.Size(), fi.ModTime().UnixNano(), ino)
}

// logPath finds the log of id under any workspace directory.
func (s *Store) logPath(id string) (string, error) {
	if err := validateID(id); err != nil {
		return "", fmt.Errorf("%w: %v", s.notFound(id), err)
	}
	s.mu.Lock()
	cached, ok := s.paths[id]
	s.mu.Unlock()
	if ok {
		if _, err := os.Lstat(cached); err == nil {
			return cached, nil
		}
	}
	slugs, err := os.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return "", s.notFound(id)
	}
	if err != nil {
		return "", fmt.Errorf("find session %s in %s: %w", id, s.root, err)
	}
	for _, slug := range slugs {
		if !slug.IsDir() {
			continue
		}
		p := filepath.Join(s.root, slug.Name(), id, logName)
		if _, err := os.Lstat(p); err == nil {
			s.remember(id, p)
			return p, nil
		}
	}
	return "", s.notFound(id)
}

func (s *Store) remember(id, path string) {
	s.mu.Lock()
	s.paths[id] = path
	s.mu.Unlock()
}

func (s *Store) notFound(id string) error {
	return fmt.Errorf("%w: no log for session %q under %s", ErrNotFound, id, s.root)
}
