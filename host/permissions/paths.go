package permissions

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/seed-e9b4dba4/dsh/host/confine"
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
func within(root, path string) bool { return confine.Within(root, path) }

// resolve evaluates the symlinks of p's longest existing prefix.
func resolve(p string) string { return confine.Resolve(p) }

// pin grants an outside path as it is when the approval is asked, so that
// the tool can only open that file. A path that cannot be pinned gets a
// grant no open satisfies.
func pin(p string) confine.Grant {
	g, err := confine.Pin(p)
	if err != nil {
		return confine.Grant{Path: p, Anchor: p}
	}
	return g
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
