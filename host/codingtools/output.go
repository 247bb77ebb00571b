package codingtools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/outputdir"
)

// outputStore holds full copies of truncated bash output: one private
// directory (0700) per session below a base directory, created on first use
// and reported to onSession, so that only that session reads its outputs
// back without asking. Files are kept after the call, as the model may read
// one back long after, even after a resume, until the retention rule
// removes them: it runs before each new file is created.
type outputStore struct {
	configured string
	onSession  func(sessionID, dir string) (untrust func())
	retention  outputdir.Retention
	log        *slog.Logger

	mu     sync.Mutex
	base   string
	trusts outputdir.Trusts
}

func newOutputStore(dir string, onSession func(sessionID, dir string) func(), retention outputdir.Retention, log *slog.Logger) *outputStore {
	return &outputStore{configured: dir, onSession: onSession, retention: retention, log: log}
}

// create applies the retention rule, then opens a new, exclusively created
// 0600 file for one call's output in the session's directory.
func (o *outputStore) create(sessionID string) (*os.File, error) {
	dir, err := o.sessionDir(sessionID)
	if err != nil {
		return nil, err
	}
	o.prune()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "bash-"+hex.EncodeToString(b[:])+".log")
	open := func() (*os.File, error) {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	}
	f, err := open()
	if errors.Is(err, fs.ErrNotExist) {
		// Another process's retention removed the directory, empty and
		// old, since this one first made sure of it.
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		f, err = open()
	}
	return f, err
}

// prune applies the retention rule to the base directory. A failure costs
// only disk space, so it is logged, never returned.
func (o *outputStore) prune() {
	o.mu.Lock()
	base := o.base
	o.mu.Unlock()
	p, err := o.retention.Prune(base, time.Now())
	if err != nil {
		o.log.Warn("bash: cannot remove old saved output", "dir", base, "err", err)
	}
	if p.Files > 0 {
		o.log.Debug("bash: removed old saved output", "dir", base, "files", p.Files, "bytes", p.Bytes, "kept_bytes", p.Kept)
	}
}

func (o *outputStore) sessionDir(sessionID string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.base == "" {
		base, err := o.makeBase()
		if err != nil {
			return "", err
		}
		o.base = base
	}
	dir := filepath.Join(o.base, outputdir.SessionDir(sessionID))
	if o.trusts.Has(sessionID) {
		return dir, nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("bash output directory %s is not a plain directory; remove it", dir)
	}
	o.trusts.Add(sessionID, func() func() {
		if o.onSession == nil {
			return nil
		}
		return o.onSession(sessionID, dir)
	})
	return dir, nil
}

func (o *outputStore) makeBase() (string, error) {
	if o.configured != "" {
		abs, err := filepath.Abs(o.configured)
		if err != nil {
			return "", err
		}
		return abs, os.MkdirAll(abs, 0o700)
	}
	return outputdir.Default("bash-output")
}

// trust gives the session read trust on its own directory, creating it
// if need be, so that a resumed session reads output saved by an earlier
// process back without asking, before it saves any itself.
func (o *outputStore) trust(sessionID string) {
	if _, err := o.sessionDir(sessionID); err != nil {
		o.log.Warn("bash: cannot trust the session's saved output", "session", sessionID, "err", err)
	}
}

// forget withdraws the session's read trust; its files stay.
func (o *outputStore) forget(sessionID string) { o.trusts.Forget(sessionID) }

// close withdraws every session's read trust.
func (o *outputStore) close() { o.trusts.Close() }

// tailCollector receives a command's combined output. Up to limit bytes are
// kept in memory; past that, everything goes to a file from the store and
// only the last limit bytes stay in memory, because the end of the output is
// where errors are. The file takes at most maxSaved bytes: after that it is
// closed and the rest only passes through the tail, so a command printing
// forever fills neither memory nor disk.
type tailCollector struct {
	limit    int
	maxSaved int64
	store    *outputStore
	session  string

	total   int64
	buf     []byte // all output while total <= limit, afterwards the tail
	file    *os.File
	path    string
	saved   int64 // bytes written to the file
	full    bool  // the file reached maxSaved
	fileErr error
}

func (c *tailCollector) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if c.file == nil && c.path == "" && c.fileErr == nil && len(c.buf)+len(p) > c.limit {
		c.spill()
	}
	if c.file != nil {
		c.save(p)
	}
	c.buf = append(c.buf, p...)
	if len(c.buf) > 2*c.limit {
		// Amortized trim: keep the last limit bytes.
		c.buf = append(c.buf[:0], c.buf[len(c.buf)-c.limit:]...)
	}
	return len(p), nil
}

func (c *tailCollector) spill() {
	f, err := c.store.create(c.session)
	if err != nil {
		c.fileErr = err
		return
	}
	c.file, c.path = f, f.Name()
	c.save(c.buf)
}

// save appends p to the file, up to maxSaved, and closes the file when it is
// full or failed.
func (c *tailCollector) save(p []byte) {
	room := c.maxSaved - c.saved
	if int64(len(p)) > room {
		p, c.full = p[:room], true
	}
	n, err := c.file.Write(p)
	c.saved += int64(n)
	if err != nil {
		c.fileErr = fmt.Errorf("writing %s: %w", c.path, err)
	}
	if err != nil || c.full {
		if err := c.file.Close(); err != nil && c.fileErr == nil {
			c.fileErr = fmt.Errorf("closing %s: %w", c.path, err)
		}
		c.file = nil
	}
}

// finish closes the spill file and returns the kept text, the number of
// leading bytes dropped, and a note naming where the full output went.
func (c *tailCollector) finish() (text []byte, dropped int64, note string) {
	if c.file != nil {
		if err := c.file.Close(); err != nil && c.fileErr == nil {
			c.fileErr = fmt.Errorf("closing %s: %w", c.path, err)
		}
		c.file = nil
	}
	if c.total <= int64(c.limit) {
		return c.buf, 0, ""
	}
	tail := trimLeadingContinuation(c.buf[max(0, len(c.buf)-c.limit):])
	dropped = c.total - int64(len(tail))
	if c.fileErr != nil {
		return tail, dropped, fmt.Sprintf("[output truncated: first %d bytes omitted; the full output could not be saved: %v]", dropped, c.fileErr)
	}
	if c.full {
		return tail, dropped, fmt.Sprintf("[output truncated: first %d bytes omitted; only the first %s of the %d bytes were saved, to %s (tools.bash.saved_output.max_bytes), the command kept running]",
			dropped, byteSize(c.maxSaved), c.total, c.path)
	}
	return tail, dropped, fmt.Sprintf("[output truncated: first %d bytes omitted; full output: %s]", dropped, c.path)
}

// byteSize names n in MiB when it is a whole number of them, else in bytes.
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
