package codingtools

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// outputStore is the private directory holding full copies of truncated bash
// output. It is created on first use (0700) and never cleaned up by dsh: the
// model may read a file back long after the call, even after a resume.
type outputStore struct {
	configured string
	onCreate   func(dir string)

	mu  sync.Mutex
	dir string
}

func newOutputStore(dir string, onCreate func(string)) *outputStore {
	return &outputStore{configured: dir, onCreate: onCreate}
}

// create opens a new, exclusively created 0600 file for one call's output.
func (o *outputStore) create() (*os.File, error) {
	dir, err := o.ensureDir()
	if err != nil {
		return nil, err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, "bash-"+hex.EncodeToString(b[:])+".log"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

func (o *outputStore) ensureDir() (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dir != "" {
		return o.dir, nil
	}
	var dir string
	if o.configured != "" {
		abs, err := filepath.Abs(o.configured)
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return "", err
		}
		dir = abs
	} else {
		d, err := os.MkdirTemp("", "dsh-bash-")
		if err != nil {
			return "", err
		}
		dir = d
	}
	o.dir = dir
	if o.onCreate != nil {
		o.onCreate(dir)
	}
	return dir, nil
}

// tailCollector receives a command's combined output. Up to limit bytes are
// kept in memory; past that, everything goes to a file from the store and
// only the last limit bytes stay in memory, because the end of the output is
// where errors are.
type tailCollector struct {
	limit int
	store *outputStore

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
	f, err := c.store.create()
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
