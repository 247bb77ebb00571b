package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Rule allows one kind of access to a path and everything beneath it.
type Rule struct {
	Path string
	// Dir is set for a directory (directory rights apply beneath it).
	Dir bool
	// Write allows changes; otherwise only reading and executing.
	Write bool
}

// devices are the device files every command may write: shells redirect to
// /dev/null all the time.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full"}

// Plan turns p into allow rules. Landlock cannot deny a path beneath an
// allowed directory, so "read everything but Hidden" walks from / down to
// each hidden path and allows every sibling on the way instead of their
// parent; the directories on the way stay traversable (a path through them
// still opens) but cannot be listed, and an entry created in them after the
// command starts is not covered. Writes work the same way: each Write root
// is allowed whole unless a ReadOnly or Hidden path lies inside it, in which
// case its other entries are allowed one by one, so new entries cannot be
// created directly in such a root. Symbolic links are never followed: the
// path they lead to is covered, or not, on its own.
func Plan(p Policy) []Rule {
	hidden := resolveAll(p.Hidden)
	var rules []Rule
	rules = allowExcept(rules, "/", hidden, false)
	except := append(resolveAll(p.ReadOnly), hidden...)
	for _, w := range resolveAll(p.Write) {
		rules = allowExcept(rules, w, except, true)
	}
	for _, d := range devices {
		if _, err := os.Stat(d); err == nil {
			rules = append(rules, Rule{Path: d, Write: true})
		}
	}
	return rules
}

// allowExcept appends the rules allowing root minus the excluded paths.
func allowExcept(rules []Rule, root string, excluded []string, write bool) []Rule {
	fi, err := os.Lstat(root)
	if err != nil {
		return rules
	}
	var inside []string
	for _, e := range excluded {
		if e == root || isBelow(e, root) {
			inside = append(inside, e)
		}
	}
	if slices.Contains(inside, root) {
		return rules
	}
	if len(inside) == 0 || !fi.IsDir() {
		if fi.IsDir() || fi.Mode().IsRegular() {
			rules = append(rules, Rule{Path: root, Dir: fi.IsDir(), Write: write})
		}
		return rules
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		// Unlistable: nothing beneath it can be allowed one by one, so
		// nothing is; the command gets less, never more.
		return rules
	}
	for _, e := range entries {
		child := filepath.Join(root, e.Name())
		switch t := e.Type(); {
		case t&os.ModeSymlink != 0:
			continue
		case t.IsDir():
			rules = allowExcept(rules, child, inside, write)
		case t.IsRegular():
			if !slices.Contains(inside, child) {
				rules = append(rules, Rule{Path: child, Write: write})
			}
		}
	}
	return rules
}

// isBelow reports whether path is strictly beneath dir (both clean).
func isBelow(path, dir string) bool {
	if dir == "/" {
		return path != "/" && strings.HasPrefix(path, "/")
	}
	return strings.HasPrefix(path, dir+"/")
}

// resolveAll returns the absolute, clean entries of paths with symbolic
// links resolved; missing paths are dropped.
func resolveAll(paths []string) []string {
	var out []string
	for _, p := range clean(paths) {
		r, err := filepath.EvalSymlinks(filepath.Clean(p))
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// planKey identifies rules, for telling whether a zygote's ruleset is
// still the one Plan builds now.
func planKey(rules []Rule, network bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "network=%t\n", network)
	for _, r := range rules {
		fmt.Fprintf(h, "%q dir=%t write=%t\n", r.Path, r.Dir, r.Write)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
