package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestUpRecallsPromptsSentInAnEarlierRunInThisWorkspace(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "One."), textReply("", "Two.")))
	file := filepath.Join(t.TempDir(), "home", "prompt-history.jsonl")
	withHistory := func(o *Options) { o.PromptHistory = file }

	d := startUI(t, b, withHistory)
	d.submit("first prompt")
	d.waitText("One.", "○ ready")
	d.submit("second prompt")
	d.waitText("Two.", "○ ready")
	if out := d.exit(); out.Err != nil {
		t.Fatal(out.Err)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the history file is not private: %v %v", st, err)
	}

	// Another workspace's prompt is not offered here.
	other := &promptHistory{path: file}
	other.enqueue("/elsewhere", "a prompt of another workspace")
	if err := other.flush(); err != nil {
		t.Fatal(err)
	}

	d2 := startUI(t, b, withHistory)
	d2.key(tcell.KeyUp)
	d2.waitFor("the last prompt in the input", func(s string) bool { return strings.Contains(row(s, -2), "second prompt") })
	d2.key(tcell.KeyUp)
	d2.waitFor("the one before", func(s string) bool { return strings.Contains(row(s, -2), "first prompt") })
	d2.key(tcell.KeyUp)
	screen := d2.waitFor("the oldest stays", func(s string) bool { return strings.Contains(row(s, -2), "first prompt") })
	if strings.Contains(screen, "another workspace") {
		t.Errorf("a prompt of another workspace was recalled:\n%s", screen)
	}
}

func TestThePromptHistoryStaysBounded(t *testing.T) {
	h := &promptHistory{path: filepath.Join(t.TempDir(), "prompt-history.jsonl")}
	h.enqueue("/w", strings.Repeat("x", maxPromptBytes+1)) // too long to keep
	long := strings.Repeat("y", 4000)
	for i := range 600 {
		h.enqueue("/w", fmt.Sprintf("%04d %s", i, long))
		if err := h.flush(); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(h.path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > maxHistoryBytes+int64(len(long))+100 {
		t.Errorf("the file grew to %d bytes", st.Size())
	}
	got, err := h.recall(session.Workspace{Given: "/w", Canonical: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "0599 ") {
		t.Fatalf("the newest prompt is not kept (%d recalled)", len(got))
	}
	for _, p := range got {
		if strings.HasPrefix(p, "xxx") {
			t.Errorf("a prompt over %d bytes was kept", maxPromptBytes)
		}
	}

	// A damaged line costs only itself.
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{not json\n")
	f.Close()
	h.enqueue("/w", "after the damage")
	if err := h.flush(); err != nil {
		t.Fatal(err)
	}
	if got, err := h.recall(session.Workspace{Given: "/w", Canonical: "/w"}); err != nil || got[len(got)-1] != "after the damage" {
		t.Errorf("recall after a damaged line = %v, %v", len(got), err)
	}
}

// TestRecallFollowsTheWorkspaceRule: the prompts recalled in a workspace
// are those of the sessions listed there (session.Workspace): run through a
// link, the UI recalls what was sent at the real path and through the link;
// at the real path, with a trailing slash, only what was sent there.
func TestRecallFollowsTheWorkspaceRule(t *testing.T) {
	root := t.TempDir()
	real, link := filepath.Join(root, "real"), filepath.Join(root, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	h := &promptHistory{path: filepath.Join(root, "prompt-history.jsonl")}
	for _, r := range []promptRecord{{real, "at the real path"}, {link, "through the link"}, {root, "elsewhere"}} {
		h.enqueue(r.Cwd, r.Text)
	}
	if err := h.flush(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cwd  string
		want []string
	}{
		{link, []string{"at the real path", "through the link"}},
		{real + "/", []string{"at the real path"}},
	} {
		ws, err := session.ResolveWorkspace(tc.cwd)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := h.recall(ws); err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("recall from %s = %q, %v; want %q", tc.cwd, got, err, tc.want)
		}
	}
}
