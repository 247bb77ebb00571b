package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPlanAllowsSiblingsOfExcludedPaths(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	for _, d := range []string{"ws/.git", "ws/src", "ws/.dsh", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(ws, "go.mod"), "module x\n")
	if err := os.Symlink(filepath.Join(ws, ".git"), filepath.Join(ws, "gitlink")); err != nil {
		t.Fatal(err)
	}
	rules := Plan(Policy{
		Write:    []string{ws},
		ReadOnly: []string{filepath.Join(ws, ".git"), filepath.Join(ws, ".dsh")},
		Hidden:   []string{filepath.Join(root, "other")},
	})
	var writes []Rule
	for _, r := range rules {
		if r.Write && isBelow(r.Path, root) {
			writes = append(writes, r)
		}
		if !r.Write && (r.Path == "/" || r.Path == filepath.Join(root, "other") || isBelow(filepath.Join(root, "other"), r.Path) && r.Dir) {
			t.Fatalf("read rule %+v covers the hidden folder", r)
		}
	}
	want := []Rule{{Path: filepath.Join(ws, "go.mod"), Write: true}, {Path: filepath.Join(ws, "src"), Dir: true, Write: true}}
	if !slices.Equal(writes, want) {
		t.Fatalf("write rules = %+v, want %+v (no .git, .dsh, symlink or the root itself)", writes, want)
	}
	// Without exclusions inside it, a root is allowed whole.
	rules = Plan(Policy{Write: []string{filepath.Join(ws, "src")}})
	if !slices.Contains(rules, Rule{Path: filepath.Join(ws, "src"), Dir: true, Write: true}) || !slices.Contains(rules, Rule{Path: "/", Dir: true}) {
		t.Fatalf("rules = %+v, want / readable and src writable whole", rules)
	}
}
