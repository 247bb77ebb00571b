package confine

import (
	"os"
	"path/filepath"
	"strings"
)

// Within reports whether path is root or inside it, after resolving
// symlinks in both, so a link inside root pointing elsewhere does not
// smuggle a path in. Both must be absolute.
func Within(root, path string) bool {
	if root == "" || !filepath.IsAbs(root) || !filepath.IsAbs(path) {
		return false
	}
	return lexicallyWithin(Resolve(root), Resolve(path))
}

// lexicallyWithin reports whether the clean absolute path is root or below
// it, by name alone.
func lexicallyWithin(root, path string) bool {
	_, ok := relBelow(root, path)
	return ok
}

// relBelow returns path relative to root ("." for root itself) when path is
// lexically root or below it.
func relBelow(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// Resolve evaluates symlinks in the longest existing prefix of p and keeps
// the rest, so a file about to be created resolves through its directory
// and a dangling link resolves to where it points.
func Resolve(p string) string { return resolveDepth(p, 0) }

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
