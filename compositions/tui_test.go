package compositions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/tui"
	"github.com/seed-e9b4dba4/dsh/host/tui/tuitest"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// startTUI runs RunTUI on a simulation screen and waits for its first
// frame.
func startTUI(t *testing.T, rt *Runtime, cwd, resume string) *tuitest.Driver[tui.Result] {
	t.Helper()
	d := tuitest.New[tui.Result](t, 110, 32)
	// A whole runtime under -race on a shared machine can be slow; the
	// limit only ends a broken test.
	d.Limit = 2 * time.Minute
	ctx, cancel := context.WithCancel(t.Context())
	d.Start(func() (tui.Result, error) {
		return RunTUI(ctx, rt, TUIOptions{Cwd: cwd, Resume: resume, Version: "test", Screen: d.Screen, AfterDraw: d.AfterDraw})
	})
	t.Cleanup(cancel)
	d.WaitFor("the first frame", func(string) bool { return true })
	return d
}

func TestTUICompositionRunsATurnWithAnApprovalAndResumes(t *testing.T) {
	srv := fakellm.New(
		fakellm.Reply{Reasoning: "Run it.", ToolCalls: []fakellm.ToolCall{{ID: "call_1", Name: "bash", Arguments: `{"command":"echo from-the-shell","description":"Echo a marker"}`}}},
		fakellm.Reply{Text: "The shell said hello."},
	)
	defer srv.Close()
	cfg, cwd := loadConfig(t, "", "llm.base_url="+srv.URL, "llm.api_key=k")
	rt := newRuntime(t, TUI, cfg)

	d := startTUI(t, rt, cwd, "")
	d.Submit("run the marker command")
	d.WaitText("Approval needed", "echo from-the-shell", "permission mode default asks before running commands")
	d.Type("y")
	d.WaitText("✓ Echo a marker", "│ from-the-shell", "The shell said hello.", "○ ready")
	out := d.Exit()
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	id := out.Res.SessionID
	if out.Res.ResumeCommand != "dsh tui --resume "+id {
		t.Errorf("resume command = %q", out.Res.ResumeCommand)
	}
	if len(rt.Agents()) != 0 {
		t.Errorf("RunTUI left %d sessions open", len(rt.Agents()))
	}

	// The log survives; resuming rebuilds the transcript from it and the
	// session-query service lists it for /resume.
	d = startTUI(t, rt, cwd, id)
	d.WaitText("› run the marker command", "The shell said hello.", "session resumed")
	d.Submit("/resume")
	d.WaitText("Resume a session", "run the marker command", "current")
	d.Key(tcell.KeyEscape)
	if out := d.Exit(); out.Err != nil || out.Res.SessionID != id {
		t.Errorf("second run: %+v", out)
	}
}

func TestRunTUIFailsBeforeTouchingTheTerminalForAnUnknownSession(t *testing.T) {
	cfg, cwd := loadConfig(t, "")
	rt := newRuntime(t, TUI, cfg)
	screen := tcell.NewSimulationScreen("UTF-8")
	_, err := RunTUI(t.Context(), rt, TUIOptions{Cwd: cwd, Resume: "no-such-session", Screen: screen})
	if err == nil || !strings.Contains(err.Error(), "no-such-session") {
		t.Fatalf("err = %v", err)
	}
	if _, w, _ := screen.GetContents(); w != 0 {
		t.Error("the screen was initialized for a session that cannot open")
	}
}

func TestRunTUIRefusesOtherCompositions(t *testing.T) {
	cfg, cwd := loadConfig(t, "")
	rt := newRuntime(t, Headless, cfg)
	if _, err := RunTUI(t.Context(), rt, TUIOptions{Cwd: cwd}); err == nil {
		t.Fatal("RunTUI ran over a headless runtime")
	}
}

func TestTUISearchFindsAPastSessionThroughTheFullTextIndex(t *testing.T) {
	srv := fakellm.New(
		fakellm.Reply{Text: "The quarterly zebra audit is due on Friday."},
		fakellm.Reply{Text: "Something unrelated."},
	)
	defer srv.Close()
	cfg, cwd := loadConfig(t, "", "llm.base_url="+srv.URL, "llm.api_key=k")
	rt := newRuntime(t, TUI, cfg)

	d := startTUI(t, rt, cwd, "")
	d.Submit("when is the zebra audit")
	d.WaitText("The quarterly zebra audit is due on Friday.", "○ ready")
	first := d.Exit()

	d = startTUI(t, rt, cwd, "")
	d.Submit("another topic")
	d.WaitText("Something unrelated.", "○ ready")
	d.Submit("/search zebra audit")
	d.WaitText("Search zebra audit", "when is the zebra audit", "reply: The quarterly zebra audit is due on Friday.", "1 session")
	d.Key(tcell.KeyEnter)
	screen := d.WaitText("Viewing", "read-only", "› when is the zebra audit")
	if strings.Contains(screen, "Something unrelated.") {
		t.Errorf("the viewer shows the current session:\n%s", screen)
	}
	d.Type("r")
	d.WaitText("○ ready", "The quarterly zebra audit is due on Friday.")
	if out := d.Exit(); out.Res.SessionID != first.Res.SessionID {
		t.Errorf("r resumed %s, want %s", out.Res.SessionID, first.Res.SessionID)
	}
}
