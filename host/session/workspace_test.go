package session

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWorkspaceIdentity(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(root, "proj")
	link := filepath.Join(root, "link")
	old, renamed := filepath.Join(root, "old"), filepath.Join(root, "renamed")
	for _, d := range []string{proj, old, filepath.Join(root, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	oldWs := mustWorkspace(t, old)
	if err := os.Rename(old, renamed); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name   string
		given  string // the caller's path
		stored string // a session header's cwd
		want   bool
	}{
		{"same path", proj, proj, true},
		{"caller with a trailing slash", proj + "/", proj, true},
		{"caller with ..", filepath.Join(root, "sub") + "/../proj", proj, true},
		{"stored with a trailing slash is another spelling", proj, proj + "/", false},
		{"the same spelling with a trailing slash", proj + "/", proj + "/", true},
		{"stored with .. is another spelling", proj, root + "/sub/../proj", false},
		{"caller through a symlink, log recorded at the real path", link, proj, true},
		{"caller through a symlink, log recorded through it", link, link, true},
		{"caller at the real path, log recorded through a link", proj, link, false},
		{"case variant", proj, filepath.Join(root, "PROJ"), false},
		{"other directory", proj, filepath.Join(root, "sub"), false},
		{"renamed: the old name no longer matches the new", renamed, old, false},
		{"renamed: the new name matches new logs", renamed, renamed, true},
	}
	for _, tc := range cases {
		w := mustWorkspace(t, tc.given)
		if got := w.Holds(&tc.stored); got != tc.want {
			t.Errorf("%s: %+v holds %q = %v, want %v", tc.name, w, tc.stored, got, tc.want)
		}
	}

	// A removed or renamed directory still resolves, to its cleaned path.
	if gone, err := ResolveWorkspace(old + "/"); err != nil || gone.Given != old || gone.Canonical != old {
		t.Errorf("ResolveWorkspace(removed) = %+v, %v; want %s in both forms", gone, err, old)
	}
	// Sessions recorded before the rename keep matching the old name.
	if stored := old; !oldWs.Holds(&stored) {
		t.Error("a log of the old path does not match the workspace it was recorded in")
	}
	if w := mustWorkspace(t, link); !slices.Equal(w.Forms(), []string{proj, link}) {
		t.Errorf("Forms() = %v, want the canonical then the given path", w.Forms())
	}
	if w := mustWorkspace(t, proj+"/"); !slices.Equal(w.Forms(), []string{proj, proj + "/"}) {
		t.Errorf("Forms() = %v, want the cleaned then the named path", w.Forms())
	}
	if w := mustWorkspace(t, proj); !slices.Equal(w.Forms(), []string{proj}) || w.Holds(nil) {
		t.Errorf("Forms() = %v, or a session without cwd is held", w.Forms())
	}
	if _, err := ResolveWorkspace(""); err == nil {
		t.Error("an empty workspace path resolves")
	}
}

func mustWorkspace(t *testing.T, path string) Workspace {
	t.Helper()
	w, err := ResolveWorkspace(path)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
