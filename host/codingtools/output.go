package codingtools

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// outputStore holds full copies of truncated bash output: one private
// directory (0700) per session below a base directory, created on first use
// and reported to onSession, so that only that session reads its outputs
// back without asking. Files are kept after the call: the model may read one
// back long after, even after a resume.
type outputStore struct {
	configured string
	onSession  func(sessionID, dir string) (untrust func())

	mu       sync.Mutex
	base     string
	sessions map[string]func() // session id -> untrust of its directory
}

func newOutputStore(dir string, onSession func(sessionID, dir string) func()) *outputStore {
	return &outputStore{configured: dir, onSession: onSession, sessions: map[string]func(){}}
}

// sessionDirName names a session's directory without putting the id, which
// a client chooses, into a path.
func sessionDirName(sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return "session-" + hex.EncodeToString(sum[:])[:12]
}

// create opens a new, exclusively created 0600 file for one call's output
// in the session's directory.
func (o *outputStore) create(sessionID string) (*os.File, error) {
	dir, err := o.sessionDir(sessionID)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, "bash-"+hex.EncodeToString(b[:])+".log"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
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
	dir := filepath.Join(o.base, sessionDirName(sessionID))
	if _, ok := o.sessions[sessionID]; ok {
		return dir, nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("bash output directory %s is not a plain directory; remove it", dir)
	}
	untrust := func() {}
	if o.onSession != nil {
		untrust = o.onSession(sessionID, dir)
	}
	o.sessions[sessionID] = untrust
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
	return os.MkdirTemp("", "dsh-bash-")
}

// forget withdraws the session's read trust; its files stay.
func (o *outputStore) forget(sessionID string) {
	o.mu.Lock()
	untrust, ok := o.sessions[sessionID]
	delete(o.sessions, sessionID)
	o.mu.Unlock()
	if ok {
		untrust()
	}
}

// close withdraws every session's read trust.
func (o *outputStore) close() {
	o.mu.Lock()
	all := o.sessions
	o.sessions = map[string]func(){}
	o.mu.Unlock()
	for _, untrust := range all {
		untrust()
	}
}

// tailCollector receives a command's combined output. Up to limit bytes are
// kept in memory; past that, everything goes to a file from the store and
// only the last limit bytes stay in memory, because the end of the output is
// where errors are.
type tailCollector struct {
	limit   int
	store   *outputStore
	session string

	total   int64
	buf     []byte // all output while total <= limit, afterwards the tail
	file    *os.File
	path    string
	fileErr error
}

func (c *tailCollector) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if c.file == nil && c.fileErr == nil && len(c.buf)+len(p) > c.limit {
		c.spill()
	}
	if c.file != nil {
		if _, err := c.file.Write(p); err != nil {
			c.fileErr = fmt.Errorf("writing %s: %w", c.path, err)
			c.file.Close()
			c.file = nil
		}
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
	if _, err := f.Write(c.buf); err != nil {
		c.fileErr = fmt.Errorf("writing %s: %w", c.path, err)
		f.Close()
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
	return tail, dropped, fmt.Sprintf("[output truncated: first %d bytes omitted; full output: %s]", dropped, c.path)
}
