package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// callPaths returns the absolute paths a call touches, as its definition
// presents them. A relative location is taken against the session's working
// directory; without one it stays relative and so counts as outside.
func callPaths(call *tools.Call, def *tools.Definition) (paths []string, ok bool) {
	if def.PresentCall == nil {
		return nil, true
	}
	var view *tools.CallView
	func() {
		defer func() {
			if recover() != nil {
				ok = false
			}
		}()
		view = def.PresentCall(call)
		ok = true
	}()
	if !ok || view == nil {
		return nil, ok
	}
	for _, l := range view.Locations {
		p := l.Path
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) && call.Cwd != "" {
			p = filepath.Join(call.Cwd, p)
		}
		paths = append(paths, filepath.Clean(p))
	}
	return paths, true
}

// within reports whether path is root or inside it, after resolving
// symlinks in both, so a link inside the workspace pointing elsewhere does
// not smuggle a path in.
func within(root, path string) bool {
	if root == "" || !filepath.IsAbs(path) {
		return false
	}
	r, p := resolve(root), resolve(path)
	rel, err := filepath.Rel(r, p)
	if err != nil {
		return false
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve evaluates symlinks in the longest existing prefix of p and keeps
// the rest, so a file about to be created resolves through its directory and
// a dangling link resolves to where it points.
func resolve(p string) string { return resolveDepth(p, 0) }

func resolveDepth(p string, depth int) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if target, err := os.Readlink(p); err == nil && depth < 40 {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			return filepath.Join(resolveDepth(target, depth+1), rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// hardLinked reports whether p is an existing regular file with more than
// one hard link. Symlinks are resolved first (within already checked where
// they lead).
func hardLinked(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
