package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// writeLines writes a file of n numbered lines into the backend's workspace.
func writeLines(t *testing.T, b *backend, name string, n int) string {
	t.Helper()
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %02d of the file\n", i)
	}
	path := filepath.Join(b.cwd, name)
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAToolCardShowsAHeadTailPreviewAndExpands(t *testing.T) {
	b := newBackend(t, nil)
	path := writeLines(t, b, "notes.txt", 30)
	b.provider = newScripted(
		toolReply("call_1", "read", fmt.Sprintf(`{"file_path":%q}`, path)),
		textReply("", "The file has thirty lines."),
	)
	d := startUI(t, b, nil)
	d.submit("read notes.txt")
	screen := d.waitText("✓ Read notes.txt", "The file has thirty lines.")
	if !strings.Contains(screen, "line 01 of the file") || !strings.Contains(screen, "line 30 of the file") {
		t.Errorf("the collapsed card lacks its head or tail:\n%s", screen)
	}
	if strings.Contains(screen, "line 15 of the file") {
		t.Errorf("the collapsed card shows its middle:\n%s", screen)
	}
	if !strings.Contains(screen, "more lines · Ctrl+O or click expands") {
		t.Errorf("the collapsed card does not say how much is hidden:\n%s", screen)
	}

	d.keyMod(tcell.KeyCtrlO, 0, tcell.ModCtrl)
	d.waitText("tool cards expanded")
	d.keyMod(tcell.KeyPgUp, 0, tcell.ModNone)
	screen = d.waitText("line 15 of the file")
	if strings.Contains(screen, "more lines") {
		t.Errorf("the expanded card still hides lines:\n%s", screen)
	}

	// Hidden mode keeps only the title row.
	d.keyMod(tcell.KeyCtrlO, 0, tcell.ModCtrl)
	screen = d.waitText("tool cards hidden")
	if strings.Contains(screen, "line 01 of the file") {
		t.Errorf("hidden cards show output:\n%s", screen)
	}
	d.keyMod(tcell.KeyCtrlO, 0, tcell.ModCtrl)
	d.waitText("tool cards collapsed", "more lines")
}

func TestClickingAToolCardTogglesOnlyThatCard(t *testing.T) {
	b := newBackend(t, nil)
	path := writeLines(t, b, "notes.txt", 20)
	b.provider = newScripted(
		toolReply("call_1", "read", fmt.Sprintf(`{"file_path":%q}`, path)),
		textReply("", "Done."),
	)
	d := startUI(t, b, nil)
	d.submit("read it")
	screen := d.waitText("✓ Read notes.txt", "Done.")
	y := -1
	for i, r := range strings.Split(screen, "\n") {
		if strings.Contains(r, "✓ Read notes.txt") {
			y = i
		}
	}
	d.screen.InjectMouse(3, y, tcell.Button1, tcell.ModNone)
	d.screen.InjectMouse(3, y, tcell.ButtonNone, tcell.ModNone)
	screen = d.waitText("line 10 of the file")
	if strings.Contains(screen, "more lines") {
		t.Errorf("the clicked card is still collapsed:\n%s", screen)
	}
}

func TestARunningCommandShowsItsOutputAndACancelledOneKeepsIt(t *testing.T) {
	b := newBackend(t, newScripted(
		toolReply("call_1", "bash", `{"command":"printf 'live-line-1\\nlive-line-2\\n'; sleep 60","description":"A long command"}`),
		textReply("", "not reached"),
	))
	d := startUI(t, b, nil)
	d.submit("run it")
	d.waitText("Approval needed")
	d.typeText("y")
	screen := d.waitText("⋯ A long command", "│ live-line-1", "│ live-line-2", "● running tools")
	if strings.Contains(screen, "Approval needed") {
		t.Errorf("the dialog stayed open:\n%s", screen)
	}
	d.key(tcell.KeyEscape)
	screen = d.waitText("⊘ A long command", "turn cancelled", "○ ready")
	for _, want := range []string{"│ live-line-1", "│ live-line-2", "aborted"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the cancelled card lost %q:\n%s", want, screen)
		}
	}
}
