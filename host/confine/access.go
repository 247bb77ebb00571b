package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// FileID identifies a file on this machine: its device and inode.
type FileID struct {
	Dev, Ino uint64
}

// IDOf returns the identity of the file fi describes.
func IDOf(fi fs.FileInfo) (FileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, false
	}
	return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, true
}

// Links returns the hard-link count of the file fi describes (1 when the
// platform does not say).
func Links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// Grant is how a call may reach one path and everything beneath it.
type Grant struct {
	// Path is the absolute, clean path as the call presents it.
	Path string
	// Root, when set, confines Path beneath that directory.
	Root string
	// Anchor and ID pin an approved path outside every root: Anchor is the
	// resolved existing file or directory at Path whose identity was ID
	// when approval was asked, or, when Path did not exist, its nearest
	// existing ancestor directory with Rest the missing part below it.
	Anchor string
	Rest   string
	ID     FileID
	// Dir records that Anchor was a directory.
	Dir bool
}

// Beneath grants path confined beneath the directory root.
func Beneath(path, root string) Grant {
	return Grant{Path: filepath.Clean(path), Root: filepath.Clean(root)}
}

// Pin grants path as it is now, outside every root: opening it later
// succeeds only for the same file (or, for a path that does not exist yet,
// beneath the same ancestor directory).
func Pin(path string) (Grant, error) {
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) {
		return Grant{}, fmt.Errorf("cannot pin the relative path %q", path)
	}
	anchor, rest := Resolve(path), ""
	for {
		fi, err := os.Stat(anchor)
		if err == nil {
			id, ok := IDOf(fi)
			if !ok {
				return Grant{}, fmt.Errorf("cannot identify %s on this platform", anchor)
			}
			// A file with a Rest (a path through a regular file) pins
			// nothing that can open; the tool reports the open's error.
			return Grant{Path: path, Anchor: anchor, Rest: rest, ID: id, Dir: fi.IsDir()}, nil
		}
		// Missing or unreadable: pin the nearest ancestor that can be
		// identified; opening beneath it reports the real error.
		parent := filepath.Dir(anchor)
		if parent == anchor {
			return Grant{}, err
		}
		rest = filepath.Join(filepath.Base(anchor), rest)
		anchor = parent
	}
}

// Access is what one call may open: a grant per presented path, or
// everything.
type Access struct {
	unrestricted bool
	grants       []Grant
}

// Unrestricted is the access of a call no policy confines.
func Unrestricted() *Access { return &Access{unrestricted: true} }

// Grants returns an access limited to grants.
func Grants(grants ...Grant) *Access { return &Access{grants: grants} }

// IsUnrestricted reports whether a opens every path as given; a nil Access
// is unrestricted.
func (a *Access) IsUnrestricted() bool { return a == nil || a.unrestricted }

// grant returns the grant covering path: the one with the longest Path
// that is path or one of its ancestors.
func (a *Access) grant(path string) (Grant, bool) {
	var best Grant
	found := false
	for _, g := range a.grants {
		if !lexicallyWithin(g.Path, path) {
			continue
		}
		if !found || len(g.Path) > len(best.Path) {
			best, found = g, true
		}
	}
	if found {
		return best, true
	}
	// Beside a presented path but inside its root (the directory of a file
	// not found, listed for suggestions): still confined beneath it.
	for _, g := range a.grants {
		if g.Root != "" && lexicallyWithin(g.Root, path) {
			return Grant{Path: g.Root, Root: g.Root}, true
		}
	}
	return Grant{}, false
}

// The errors an FS wraps in *fs.PathError; match them with errors.Is.
var (
	// ErrEscapes: the path leads outside the root it is confined to.
	ErrEscapes = errors.New("the path leads outside the directory this call may use (through a symbolic link or ..)")
	// ErrHardLinked: a regular file inside a root has other hard links,
	// which may be outside it.
	ErrHardLinked = errors.New("the file has other hard links, possibly outside the workspace, and was not approved")
	// ErrReplaced: an approved path is now a different file.
	ErrReplaced = errors.New("the path is no longer the file that was approved; it was replaced since")
	// ErrNotGranted: the call presented no grant covering the path.
	ErrNotGranted = errors.New("the path is not among those this call was allowed to use")
)
