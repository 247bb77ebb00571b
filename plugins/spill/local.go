package spill

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// LocalOptions configures a LocalStore.
type LocalOptions struct {
	// Root is the directory holding spilled results; a relative path is made
	// absolute. Empty means a private directory (0700) created under the
	// system temp dir on the first save.
	Root string
	// Random supplies the file name nonces; nil means crypto/rand. Snapshot
	// tests pass a deterministic reader.
	Random io.Reader
	// OnRoot is called once, with the absolute root, the first time the
	// root exists; the plugin uses it to let the model read spilled files
	// back without an approval prompt.
	OnRoot func(dir string)
}

// LocalStore writes spilled results to files: <root>/session-<first 12 hex
// of sha256(session id)>/<12 random hex>-<SafeName(suggested name)>. It
// never removes what it wrote: a locator may sit in a session log for as
// long as the log exists.
type LocalStore struct {
	root   string
	random io.Reader
	onRoot func(dir string)
	rootOK sync.Once

	mu      sync.Mutex
	tmpRoot string
}

var _ Store = (*LocalStore)(nil)

// NewLocalStore returns a store; it touches the file system only on save.
func NewLocalStore(opts LocalOptions) (*LocalStore, error) {
	s := &LocalStore{random: opts.Random, onRoot: opts.OnRoot}
	if s.random == nil {
		s.random = rand.Reader
	}
	if opts.Root != "" {
		abs, err := filepath.Abs(opts.Root)
		if err != nil {
			return nil, fmt.Errorf("spill root %q: %w", opts.Root, err)
		}
		s.root = abs
	}
	return s, nil
}

// SaveText writes req.Content to a new file and returns its absolute path
// as the locator.
func (s *LocalStore) SaveText(ctx context.Context, req SaveRequest) (Ref, error) {
	if err := ctx.Err(); err != nil {
		return Ref{}, fmt.Errorf("spill cancelled: %w", err)
	}
	if req.SessionID == "" {
		return Ref{}, errors.New("spill needs the id of the session that owns the result")
	}
	root, err := s.ensureRoot()
	if err != nil {
		return Ref{}, err
	}
	sum := sha256.Sum256([]byte(req.SessionID))
	dir := "session-" + hex.EncodeToString(sum[:])[:12]
	var nonce [6]byte
	s.mu.Lock()
	_, err = io.ReadFull(s.random, nonce[:])
	s.mu.Unlock()
	if err != nil {
		return Ref{}, fmt.Errorf("spill file name: %w", err)
	}
	name := hex.EncodeToString(nonce[:]) + "-" + SafeName(req.SuggestedName)
	path, err := writeExclusive(root, dir, name, req.Content)
	if err != nil {
		return Ref{}, err
	}
	return Ref{Locator: path, Bytes: len(req.Content), RetrievalHint: RetrievalHint}, nil
}

// ensureRoot returns the root, creating it (0700) if needed, and reports it
// to OnRoot the first time.
func (s *LocalStore) ensureRoot() (string, error) {
	root, err := s.makeRoot()
	if err == nil && s.onRoot != nil {
		s.rootOK.Do(func() { s.onRoot(root) })
	}
	return root, err
}

// makeRoot creates the configured root, or once per store a private
// temporary one.
func (s *LocalStore) makeRoot() (string, error) {
	if s.root != "" {
		if err := os.MkdirAll(s.root, 0o700); err != nil {
			return "", fmt.Errorf("create spill root: %w; check plugins.spill.root", err)
		}
		return s.root, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tmpRoot == "" {
		dir, err := os.MkdirTemp("", "dsh-spill-")
		if err != nil {
			return "", fmt.Errorf("create private spill directory: %w; set plugins.spill.root", err)
		}
		s.tmpRoot = dir
	}
	return s.tmpRoot, nil
}

// writeExclusive creates root/dir (0700) and root/dir/name (0600, exclusive)
// relative to open directory descriptors, refusing a symbolic link at either
// level, so a planted link can neither redirect the write nor be raced in
// between a check and the open.
func writeExclusive(root, dir, name, content string) (string, error) {
	path := filepath.Join(root, dir, name)
	if filepath.Base(path) != name || filepath.Dir(path) != filepath.Join(root, dir) {
		return "", fmt.Errorf("spill file name %q is not a single path segment", name)
	}
	rootFD, err := openRetry(func() (int, error) {
		return unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return "", &os.PathError{Op: "open spill root", Path: root, Err: err}
	}
	defer unix.Close(rootFD)
	if err := unix.Mkdirat(rootFD, dir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return "", &os.PathError{Op: "create spill directory", Path: filepath.Join(root, dir), Err: err}
	}
	dirFD, err := openRetry(func() (int, error) {
		return unix.Openat(rootFD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return "", fmt.Errorf("spill directory %s is not a plain directory (a symbolic link or a file); remove it", filepath.Join(root, dir))
		}
		return "", &os.PathError{Op: "open spill directory", Path: filepath.Join(root, dir), Err: err}
	}
	defer unix.Close(dirFD)
	fd, err := openRetry(func() (int, error) {
		return unix.Openat(dirFD, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return "", &os.PathError{Op: "create spill file", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	_, werr := io.WriteString(f, content)
	if werr == nil {
		// The locator goes into the session log, which is synced at the
		// next barrier; the file it names must not be the part that is lost.
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = unix.Unlinkat(dirFD, name, 0)
		return "", fmt.Errorf("write spill file %s: %w", path, werr)
	}
	return path, nil
}

func openRetry(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}
