package spill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-e9b4dba4/dsh/host/outputdir"
)

// LocalOptions configures a LocalStore.
type LocalOptions struct {
	// Root is the directory holding spilled results; a relative path is made
	// absolute. Empty means this user's private directory under the system
	// temp dir, shared by every dsh process (outputdir.Default), created on
	// the first save.
	Root string
	// Retention removes old spilled files before each save; the zero value
	// keeps everything.
	Retention outputdir.Retention
	// Log receives retention failures; nil discards them.
	Log *slog.Logger
	// Random supplies the file name nonces; nil means crypto/rand. Snapshot
	// tests pass a deterministic reader.
	Random io.Reader
	// OnSessionDir is called once per session, with the absolute path of
	// the session's directory, the first time a result of that session is
	// saved (or Trust is called); the plugin uses it to let that session,
	// and only it, read its spilled files back without an approval prompt.
	// The returned function withdraws that.
	OnSessionDir func(sessionID, dir string) (untrust func())
}

// LocalStore writes spilled results to files: <root>/session-<first 12 hex
// of sha256(session id)>/<12 random hex>-<SafeName(suggested name)>. Before
// each save it applies its retention rule to the root (the one bash's saved
// output follows), so what it wrote stays until it is old or the root is
// over its size; a locator in an older session log may then name a file
// that is gone.
type LocalStore struct {
	root      string
	random    io.Reader
	onSession func(sessionID, dir string) func()
	retention outputdir.Retention
	log       *slog.Logger

	mu      sync.Mutex
	tmpRoot string
	trusts  outputdir.Trusts
}

var _ Store = (*LocalStore)(nil)

// NewLocalStore returns a store; it touches the file system only on save.
func NewLocalStore(opts LocalOptions) (*LocalStore, error) {
	s := &LocalStore{random: opts.Random, onSession: opts.OnSessionDir, retention: opts.Retention, log: opts.Log}
	if s.random == nil {
		s.random = rand.Reader
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
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
	root, err := s.makeRoot()
	if err != nil {
		return Ref{}, err
	}
	s.prune(root)
	dir := outputdir.SessionDir(req.SessionID)
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
	s.trust(req.SessionID, filepath.Join(root, dir))
	return Ref{Locator: path, Bytes: len(req.Content), RetrievalHint: RetrievalHint}, nil
}

// Trust reports the session's directory to OnSessionDir (once), so a
// resumed session reads the results it spilled in an earlier process back
// without asking: below the configured root, or below the shared private
// one (outputdir.Default, made sure of first: created if need be, owned by
// this user, not a link), which every dsh process of the user spills to.
// Only the session's own directory is trusted, never the root.
func (s *LocalStore) Trust(sessionID string) {
	if s.onSession == nil {
		return
	}
	root := s.root
	if root == "" {
		var err error
		if root, err = s.makeRoot(); err != nil {
			s.log.Warn("spill: cannot trust the session's spilled results", "session", sessionID, "err", err)
			return
		}
	}
	s.trust(sessionID, filepath.Join(root, outputdir.SessionDir(sessionID)))
}

func (s *LocalStore) trust(sessionID, dir string) {
	if s.onSession == nil {
		return
	}
	s.trusts.Add(sessionID, func() func() { return s.onSession(sessionID, dir) })
}

// Forget withdraws the session's read trust; its files stay.
func (s *LocalStore) Forget(sessionID string) { s.trusts.Forget(sessionID) }

// Close withdraws every session's read trust.
func (s *LocalStore) Close() { s.trusts.Close() }

// prune applies the retention rule; a failure costs only disk space, so it
// is logged, never returned.
func (s *LocalStore) prune(root string) {
	p, err := s.retention.Prune(root, time.Now())
	if err != nil {
		s.log.Warn("spill: cannot remove old spilled results", "dir", root, "err", err)
	}
	if p.Files > 0 {
		s.log.Debug("spill: removed old spilled results", "dir", root, "files", p.Files, "bytes", p.Bytes, "kept_bytes", p.Kept)
	}
}

// makeRoot creates the configured root, or finds the shared private one.
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
		dir, err := outputdir.Default("spill")
		if err != nil {
			return "", fmt.Errorf("private spill directory: %w; or set plugins.spill.root", err)
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
