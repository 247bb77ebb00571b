package outputdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
)

// Default returns the directory name (a single path segment such as
// "bash-output") in this user's private directory of the system temp dir,
// $TMPDIR/dsh-<uid>/<name>, creating both with mode 0700. The private
// directory must be a real directory owned by this user; one open to others
// is closed (chmod 0700) first.
func Default(name string) (string, error) {
	if name == "" || filepath.Base(name) != name || name == "." || name == ".." {
		return "", fmt.Errorf("output directory name %q is not a single path segment", name)
	}
	private := filepath.Join(os.TempDir(), "dsh-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(private, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create dsh's private temporary directory: %w", err)
	}
	if err := checkPrivate(private); err != nil {
		return "", err
	}
	dir := filepath.Join(private, name)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a plain directory; remove it", dir)
	}
	return dir, nil
}

// checkPrivate refuses a directory that another user could control.
func checkPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check dsh's private temporary directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a plain directory (a symbolic link or a file); remove it", dir)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to another user (uid %d); remove it or set TMPDIR to a directory of your own", dir, uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("make %s private: %w", dir, err)
		}
	}
	return nil
}

func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// Retention bounds a directory of saved output: files older than MaxAge go,
// then the oldest until the rest hold at most MaxBytes. A zero field does
// not limit.
type Retention struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// Pruned is what one Prune removed and kept.
type Pruned struct {
	Files int   // files removed
	Bytes int64 // bytes they held
	Kept  int64 // bytes of the files left
}

// sessionDir matches the per-session directories both stores create.
var sessionDir = lazyregexp.New(`^session-[0-9a-f]{12}$`)

// emptyDirAge is how long an emptied session directory stays: a writer that
// has just made sure its directory exists must not find it gone when it
// creates its file (writers retry once anyway).
const emptyDirAge = time.Hour

type saved struct {
	dir, name string
	size      int64
	mtime     time.Time
}

// Prune applies r to the session directories under root, judging ages by
// now. A missing root is no error. Files are removed oldest first; one that
// cannot be removed is reported after the rest were tried.
func (r Retention) Prune(root string, now time.Time) (Pruned, error) {
	var p Pruned
	rt, err := os.OpenRoot(root)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("prune %s: %w", root, err)
	}
	defer rt.Close()
	dirs, err := readDir(rt, ".")
	if err != nil {
		return p, fmt.Errorf("prune %s: %w", root, err)
	}
	var files []saved
	var errs []error
	dirTimes := map[string]time.Time{}
	for _, d := range dirs {
		if !d.IsDir() || !sessionDir.MatchString(d.Name()) {
			continue
		}
		if info, err := d.Info(); err == nil {
			dirTimes[d.Name()] = info.ModTime()
		}
		entries, err := readDir(rt, d.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			files = append(files, saved{dir: d.Name(), name: e.Name(), size: info.Size(), mtime: info.ModTime()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mtime.Before(files[j].mtime) })
	var total int64
	for _, f := range files {
		total += f.size
	}
	for _, f := range files {
		old := r.MaxAge > 0 && now.Sub(f.mtime) > r.MaxAge
		over := r.MaxBytes > 0 && total > r.MaxBytes
		if !old && !over {
			break // the rest are newer, and they fit
		}
		if err := rt.Remove(filepath.Join(f.dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		total -= f.size
		p.Files++
		p.Bytes += f.size
	}
	p.Kept = total
	for dir, mtime := range dirTimes {
		if now.Sub(mtime) > emptyDirAge {
			// Fails, as it should, while the directory holds anything.
			_ = rt.Remove(dir)
		}
	}
	return p, errors.Join(errs...)
}

func readDir(rt *os.Root, name string) ([]fs.DirEntry, error) {
	f, err := rt.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}
