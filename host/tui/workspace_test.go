package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// TestPickersScopeToTheWorkspaceRule: /resume and /search keep the
// sessions session.Workspace holds for the directory the UI runs in. Run
// through a symbolic link, both list the sessions recorded at the real path
// and through the link; run at the real path with a trailing slash, they
// list the real path's alone, as dsh sessions and ACP session/list do.
func TestPickersScopeToTheWorkspaceRule(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "one"), textReply("", "two")))
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(b.cwd, link); err != nil {
		t.Fatal(err)
	}
	seedSessions(t, b,
		seed{prompt: "needle real path"},
		seed{prompt: "needle via link", cwd: link},
	)
	for _, tc := range []struct {
		cwd      string
		shown    []string
		notShown string
	}{
		{link, []string{"needle real path", "needle via link"}, ""},
		{b.cwd + "/", []string{"needle real path"}, "needle via link"},
	} {
		d := startUI(t, b, func(o *Options) { o.Cwd = tc.cwd })
		d.submit("/resume")
		screen := d.waitText(append([]string{"Resume a session", "this workspace"}, tc.shown...)...)
		if tc.notShown != "" && strings.Contains(screen, tc.notShown) {
			t.Errorf("from %s, /resume lists %q:\n%s", tc.cwd, tc.notShown, screen)
		}
		d.key(tcell.KeyEscape)
		d.waitGone("Resume a session")
		d.submit("/search needle")
		screen = d.waitText(append([]string{"Search needle", "this workspace"}, tc.shown...)...)
		if tc.notShown != "" && strings.Contains(screen, tc.notShown) {
			t.Errorf("from %s, /search lists %q:\n%s", tc.cwd, tc.notShown, screen)
		}
		d.key(tcell.KeyEscape)
		d.waitGone("Search needle")
		d.exit()
	}
}
