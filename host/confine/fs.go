package confine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// FS performs the file operations of one call within its Access. Paths are
// absolute. It is safe for concurrent use; Close releases the directory
// handles it opened.
type FS struct {
	access *Access

	mu    sync.Mutex
	roots map[string]*os.Root
}

// FS returns a file system for one call; the caller closes it.
func (a *Access) FS() *FS { return &FS{access: a, roots: map[string]*os.Root{}} }

// Close releases the handles of the roots used.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for k, r := range f.roots {
		errs = append(errs, r.Close())
		delete(f.roots, k)
	}
	return errors.Join(errs...)
}

// openFlags are added to every open: a FIFO or device must not block the
// open, and no descriptor leaks into a child process.
const openFlags = syscall.O_NONBLOCK | syscall.O_CLOEXEC

// Open opens path for reading.
func (f *FS) Open(path string) (*os.File, error) { return f.OpenFile(path, os.O_RDONLY) }

// OpenFile opens the existing path with flag, which is O_RDONLY, O_WRONLY
// or O_RDWR: creating and truncating are not open flags here, so nothing
// changes before the handle is checked (use Create, and File.Truncate).
func (f *FS) OpenFile(path string, flag int) (*os.File, error) {
	if flag&(os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("OpenFile does not create, truncate or append; use Create or the handle")}
	}
	var file *os.File
	err := f.do("open", path, func(t target) error {
		var err error
		if t.root != nil {
			file, err = t.root.OpenFile(t.rel, flag|openFlags, 0)
		} else {
			file, err = os.OpenFile(t.name, flag|openFlags, 0)
		}
		if err != nil {
			return err
		}
		if err := t.check(file); err != nil {
			file.Close()
			return err
		}
		return nil
	})
	return file, err
}

// Create creates path, which must not exist, with perm, creating missing
// parent directories (0755) first, and opens it for writing.
func (f *FS) Create(path string, perm fs.FileMode) (*os.File, error) {
	var file *os.File
	err := f.do("create", path, func(t target) error {
		var err error
		const flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL | openFlags
		if t.root != nil {
			if dir := filepath.Dir(t.rel); dir != "." {
				if err := t.root.MkdirAll(dir, 0o755); err != nil {
					return err
				}
			}
			file, err = t.root.OpenFile(t.rel, flag, perm)
			return err
		}
		if t.pin != nil {
			// A pinned existing file: creating it means it was removed
			// since the approval.
			return fs.ErrExist
		}
		if err := os.MkdirAll(filepath.Dir(t.name), 0o755); err != nil {
			return err
		}
		file, err = os.OpenFile(t.name, flag, perm)
		return err
	})
	return file, err
}

// MkdirAll creates the directory path and its missing parents (0755); an
// existing directory is not an error.
func (f *FS) MkdirAll(path string) error {
	return f.do("mkdir", path, func(t target) error {
		switch {
		case t.root != nil:
			if t.rel == "." {
				return nil
			}
			return t.root.MkdirAll(t.rel, 0o755)
		case t.pin != nil:
			// A pinned path is an existing file, never a directory to make.
			return syscall.ENOTDIR
		}
		return os.MkdirAll(t.name, 0o755)
	})
}

// Stat describes path, following symbolic links (within its root).
func (f *FS) Stat(path string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := f.do("stat", path, func(t target) error {
		var err error
		if t.root != nil {
			fi, err = t.root.Stat(t.rel)
			return err
		}
		if fi, err = os.Stat(t.name); err != nil {
			return err
		}
		return t.checkInfo(fi)
	})
	return fi, err
}

// ReadDir lists the directory path, sorted by name.
func (f *FS) ReadDir(path string) ([]fs.DirEntry, error) {
	d, err := f.Open(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: path, Err: unwrap(err)}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// ReadFile reads the regular file path whole, refusing one larger than max
// bytes with an error wrapping ErrTooLarge.
func (f *FS) ReadFile(path string, max int64) ([]byte, error) {
	file, err := f.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: ErrNotRegular}
	}
	if fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: ErrTooLarge}
	}
	b, err := io.ReadAll(io.LimitReader(file, max+1))
	if err == nil && int64(len(b)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: ErrTooLarge}
	}
	return b, err
}

// More errors of ReadFile.
var (
	ErrTooLarge   = errors.New("the file is larger than the limit")
	ErrNotRegular = errors.New("not a regular file")
)

// target is where one operation happens: beneath root at rel, or by name.
type target struct {
	root *os.Root
	rel  string
	name string
	// pin is the identity an opened file must have; confined asks for the
	// hard-link check of a workspace file.
	pin      *FileID
	confined bool
}

// check verifies an opened file against the grant it was opened under.
func (t target) check(file *os.File) error {
	if t.pin == nil && !t.confined {
		return nil
	}
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	return t.checkInfo(fi)
}

func (t target) checkInfo(fi fs.FileInfo) error {
	if t.pin != nil {
		if id, ok := IDOf(fi); !ok || id != *t.pin {
			return ErrReplaced
		}
		return nil
	}
	if t.confined && fi.Mode().IsRegular() && Links(fi) > 1 {
		return ErrHardLinked
	}
	return nil
}

// do locates path and runs op there. A confined path is first tried by its
// lexical name below the root, which keeps relative links inside working;
// when that escapes (an absolute link back into the root, or the root
// spelled differently) it is retried once by its resolved name.
func (f *FS) do(op, path string, fn func(target) error) error {
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) {
		return &fs.PathError{Op: op, Path: path, Err: errors.New("the path is not absolute")}
	}
	if f.access.IsUnrestricted() {
		return wrap(op, path, fn(target{name: path}))
	}
	g, ok := f.access.grant(path)
	if !ok {
		return &fs.PathError{Op: op, Path: path, Err: ErrNotGranted}
	}
	if g.Root != "" {
		root, err := f.root(g.Root, nil)
		if err != nil {
			return wrap(op, path, err)
		}
		rel, lexical := relBelow(g.Root, path)
		if lexical {
			err = fn(target{root: root, rel: rel, confined: true})
			if !isEscape(err) {
				return wrap(op, path, err)
			}
		}
		resolved, ok := relBelow(Resolve(g.Root), Resolve(path))
		if !ok || lexical && resolved == rel {
			return &fs.PathError{Op: op, Path: path, Err: ErrEscapes}
		}
		return wrap(op, path, fn(target{root: root, rel: resolved, confined: true}))
	}
	below, _ := relBelow(g.Path, path)
	if g.Rest == "" && !g.Dir {
		if below != "." {
			return &fs.PathError{Op: op, Path: path, Err: ErrNotGranted}
		}
		return wrap(op, path, fn(target{name: path, pin: &g.ID}))
	}
	root, err := f.root(g.Anchor, &g.ID)
	if err != nil {
		return wrap(op, path, err)
	}
	return wrap(op, path, fn(target{root: root, rel: filepath.Join(g.Rest, below)}))
}

// root opens (once per FS) the directory dir as a root; with pin, it must
// still be that directory.
func (f *FS) root(dir string, pin *FileID) (*os.Root, error) {
	key := dir
	if pin != nil {
		key = "\x00pinned:" + dir
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.roots[key]; ok {
		return r, nil
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if pin != nil {
		fi, err := r.Stat(".")
		if err != nil {
			r.Close()
			return nil, err
		}
		if id, ok := IDOf(fi); !ok || id != *pin {
			r.Close()
			return nil, ErrReplaced
		}
	}
	f.roots[key] = r
	return r, nil
}

// isEscape reports whether err is os.Root refusing a name that leaves it.
// The standard library does not export that error; its text is stable.
func isEscape(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// wrap reports err as a *fs.PathError on path, keeping only its cause so
// the message names the caller's path rather than a name below a root.
func wrap(op, path string, err error) error {
	if err == nil {
		return nil
	}
	if isEscape(err) {
		err = ErrEscapes
	}
	return &fs.PathError{Op: op, Path: path, Err: unwrap(err)}
}

// unwrap returns the cause below every *fs.PathError around err.
func unwrap(err error) error {
	var pe *fs.PathError
	for errors.As(err, &pe) {
		err = pe.Err
	}
	return err
}

// Kind names what a non-regular file is, for messages that refuse it:
// "a directory", "a FIFO", "a socket", "a character device", "a device" or
// "a special file". Every refusal of a file that must be regular (tools,
// config files, session logs, the change journal) says it this way.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
