package codingtools

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"

	"github.com/seed-e9b4dba4/dsh/host/confine"
)

// ignoreRule is one pattern line of a .gitignore (or .git/info/exclude),
// matched relative to the directory holding it.
type ignoreRule struct {
	base   string
	match  *gitignore.GitIgnore
	negate bool
}

// ignored applies rules the way git does: the last rule matching path
// decides, so a deeper file or a later "!pattern" can re-include it.
func ignored(rules []ignoreRule, path string, isDir bool) bool {
	out := false
	for _, r := range rules {
		rel, err := filepath.Rel(r.base, path)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		rel = filepath.ToSlash(rel)
		if isDir {
			rel += "/"
		}
		if r.match.MatchesPath(rel) {
			out = !r.negate
		}
	}
	return out
}

// maxIgnoreFileBytes bounds the size of one ignore file; a larger one is
// not a real .gitignore and contributes nothing.
const maxIgnoreFileBytes = 1 << 20

// loadIgnoreFile parses one ignore file, read through fsys, whose patterns
// are relative to base. A missing, unreadable or oversized file contributes
// nothing.
func loadIgnoreFile(fsys *confine.FS, file, base string) []ignoreRule {
	b, err := fsys.ReadFile(file, maxIgnoreFileBytes)
	if err != nil {
		return nil
	}
	var rules []ignoreRule
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		negate := false
		if strings.HasPrefix(line, "!") {
			negate = true
			line = line[1:]
		}
		// git anchors a pattern with a slash before its end to the ignore
		// file's directory; the library only anchors a leading slash.
		body := strings.TrimSuffix(line, "/")
		if !strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "**/") && strings.Contains(body, "/") {
			line = "/" + line
		}
		rules = append(rules, ignoreRule{base: base, match: gitignore.CompileIgnoreLines(line), negate: negate})
	}
	return rules
}

// ancestorRules returns the ignore rules that apply to root from above it:
// every .gitignore from the enclosing repository's top down to root's
// parent, and the repository's .git/info/exclude. If those rules ignore root
// itself, the caller asked for an ignored directory explicitly and gets none.
func ancestorRules(fsys *confine.FS, root string) []ignoreRule {
	if _, err := os.Lstat(filepath.Join(root, ".git")); err == nil {
		return loadIgnoreFile(fsys, filepath.Join(root, ".git", "info", "exclude"), root)
	}
	// Above the search root the call may have no grant; the rules only
	// filter what is shown, so they are read as given (without blocking).
	above := confine.Unrestricted().FS()
	defer above.Close()
	var dirs []string
	top := ""
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if top == "" {
		return nil
	}
	rules := loadIgnoreFile(above, filepath.Join(top, ".git", "info", "exclude"), top)
	for i := len(dirs) - 1; i >= 0; i-- {
		rules = append(rules, loadIgnoreFile(above, filepath.Join(dirs[i], ".gitignore"), dirs[i])...)
	}
	if ignored(rules, root, true) {
		return nil
	}
	return rules
}

// walkFiles calls visit for every non-directory entry under root, in
// directory order with names sorted, skipping .git directories and whatever
// the .gitignore files at every level exclude. Directories are listed
// through fsys, so a directory swapped for a link out of the call's root
// mid-walk is skipped; symlinks are reported, never followed. Unreadable
// directories are skipped; ctx ends the walk.
func walkFiles(ctx context.Context, fsys *confine.FS, root string, visit func(path string, d fs.DirEntry) error) error {
	var walk func(dir string, rules []ignoreRule) error
	walk = func(dir string, rules []ignoreRule) error {
		entries, err := fsys.ReadDir(dir)
		if err != nil {
			return nil
		}
		rules = append(rules[:len(rules):len(rules)], loadIgnoreFile(fsys, filepath.Join(dir, ".gitignore"), dir)...)
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			if e.Name() == ".git" {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if ignored(rules, path, e.IsDir()) {
				continue
			}
			if e.IsDir() {
				if err := walk(path, rules); err != nil {
					return err
				}
				continue
			}
			if err := visit(path, e); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root, ancestorRules(fsys, root))
}
