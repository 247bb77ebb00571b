package session

import (
	"fmt"
	"path/filepath"
	"slices"
)

// Workspace is one workspace path in the two forms dsh compares a session's
// stored cwd with: Given, the path as the user, the shell or the editor
// named it (made absolute and lexically cleaned, so a trailing slash or a
// ".." does not count), and Canonical, the same directory with symbolic
// links resolved (equal to Given when the directory no longer exists or
// cannot be resolved, e.g. it was renamed or removed).
//
// A session header stores its workspace as given (cleaned, for sessions dsh
// creates; as written, for any other log). A stored cwd belongs to the
// workspace when it equals one of the forms exactly: the stored string
// itself is never resolved or cleaned, so a log cannot claim a workspace by
// naming a symbolic link to it or a spelling variant (session-query.md §5,
// the cwd rule), while a caller who reached the directory through a link
// still finds the sessions recorded under the real path. Case variants are
// distinct even on a case-insensitive file system.
//
// Every "same workspace" decision uses Holds (the package doc lists them
// and says why the stored cwd is compared exactly).
type Workspace struct {
	Given     string
	Canonical string
	// named is the path exactly as passed, when it is absolute: a log that
	// stores that very string belongs to the workspace too.
	named string
}

// ResolveWorkspace returns the workspace at path. A relative path is taken
// against the process working directory.
func ResolveWorkspace(path string) (Workspace, error) {
	if path == "" {
		return Workspace{}, fmt.Errorf("workspace path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Workspace{}, fmt.Errorf("cannot resolve workspace %s: %w", path, err)
	}
	w := Workspace{Given: abs, Canonical: abs}
	if filepath.IsAbs(path) {
		w.named = path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		w.Canonical = real
	}
	return w, nil
}

// Holds reports whether a session whose header stores cwd belongs to w. A
// session without a cwd belongs to no workspace.
func (w Workspace) Holds(cwd *string) bool {
	return cwd != nil && slices.Contains(w.Forms(), *cwd)
}

// Forms returns the distinct stored cwd values Holds accepts, for a query
// that filters by workspace: Canonical, then Given, then the path exactly
// as named, each only when it differs from those before.
func (w Workspace) Forms() []string {
	var out []string
	for _, f := range []string{w.Canonical, w.Given, w.named} {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}
