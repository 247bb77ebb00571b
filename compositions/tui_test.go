package compositions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/tui"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// tuiDriver runs RunTUI on a simulation screen and reads its frames.
type tuiDriver struct {
	t      *testing.T
	screen tcell.SimulationScreen
	frames chan string
	last   string
	done   chan tuiOutcome
}

type tuiOutcome struct {
	res tui.Result
	err error
}

// keepSize keeps a simulation screen's size across the Init tview calls.
type keepSize struct{ tcell.SimulationScreen }

func (s keepSize) Init() error {
	if err := s.SimulationScreen.Init(); err != nil {
		return err
	}
	s.SetSize(110, 32)
	return nil
}

func startTUI(t *testing.T, rt *Runtime, cwd, resume string) *tuiDriver {
	t.Helper()
	d := &tuiDriver{t: t, screen: tcell.NewSimulationScreen("UTF-8"), frames: make(chan string, 1), done: make(chan tuiOutcome, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		res, err := RunTUI(ctx, rt, TUIOptions{
			Cwd: cwd, Resume: resume, Version: "test", Screen: keepSize{d.screen},
			AfterDraw: func(s tcell.Screen) {
				text := frameText(s)
				select {
				case <-d.frames:
				default:
				}
				d.frames <- text
			},
		})
		d.done <- tuiOutcome{res, err}
	}()
	t.Cleanup(cancel)
	d.wait(func(string) bool { return true })
	return d
}

func frameText(s tcell.Screen) string {
	w, h := s.Size()
	var b strings.Builder
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			str, _, width := s.Get(x, y)
			if str == "" {
				str = " "
			}
			b.WriteString(str)
			x += max(width, 1) - 1
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// wait returns the first frame ok accepts; the limit only ends a broken
// test.
func (d *tuiDriver) wait(ok func(string) bool, texts ...string) string {
	d.t.Helper()
	if d.last != "" && ok(d.last) {
		return d.last
	}
	limit := time.NewTimer(2 * time.Minute)
	defer limit.Stop()
	for {
		select {
		case f := <-d.frames:
			d.last = f
			if ok(f) {
				return f
			}
		case out := <-d.done:
			d.t.Fatalf("the UI exited (%v) while waiting for %q; last frame:\n%s", out.err, texts, d.last)
		case <-limit.C:
			d.t.Fatalf("not shown: %q; last frame:\n%s", texts, d.last)
		}
	}
}

func (d *tuiDriver) waitText(texts ...string) string {
	d.t.Helper()
	return d.wait(func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	}, texts...)
}

func (d *tuiDriver) typeLine(s string) {
	for _, r := range s {
		d.screen.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	d.screen.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
}

func (d *tuiDriver) exit() tuiOutcome {
	d.t.Helper()
	d.screen.InjectKey(tcell.KeyCtrlC, 0, tcell.ModCtrl)
	d.screen.InjectKey(tcell.KeyCtrlC, 0, tcell.ModCtrl)
	select {
	case out := <-d.done:
		return out
	case <-time.After(2 * time.Minute):
		d.t.Fatalf("the UI did not exit; last frame:\n%s", d.last)
		return tuiOutcome{}
	}
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
	d.typeLine("run the marker command")
	d.waitText("Approval needed", "echo from-the-shell", "permission mode default asks before running commands")
	d.screen.InjectKey(tcell.KeyRune, 'y', tcell.ModNone)
	d.waitText("✓ Echo a marker", "│ from-the-shell", "The shell said hello.", "○ ready")
	out := d.exit()
	if out.err != nil {
		t.Fatal(out.err)
	}
	id := out.res.SessionID
	if out.res.ResumeCommand != "dsh tui --resume "+id {
		t.Errorf("resume command = %q", out.res.ResumeCommand)
	}
	if len(rt.Agents()) != 0 {
		t.Errorf("RunTUI left %d sessions open", len(rt.Agents()))
	}

	// The log survives; resuming rebuilds the transcript from it and the
	// session-query service lists it for /resume.
	d = startTUI(t, rt, cwd, id)
	d.waitText("› run the marker command", "The shell said hello.", "session resumed")
	d.typeLine("/resume")
	d.waitText("Resume a session", "run the marker command", "current")
	d.screen.InjectKey(tcell.KeyEscape, 0, tcell.ModNone)
	if out := d.exit(); out.err != nil || out.res.SessionID != id {
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
	d.typeLine("when is the zebra audit")
	d.waitText("The quarterly zebra audit is due on Friday.", "○ ready")
	first := d.exit()

	d = startTUI(t, rt, cwd, "")
	d.typeLine("another topic")
	d.waitText("Something unrelated.", "○ ready")
	d.typeLine("/search zebra audit")
	d.waitText("Search zebra audit", "when is the zebra audit", "reply: The quarterly zebra audit is due on Friday.", "1 session")
	d.screen.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	screen := d.waitText("Viewing", "read-only", "› when is the zebra audit")
	if strings.Contains(screen, "Something unrelated.") {
		t.Errorf("the viewer shows the current session:\n%s", screen)
	}
	d.screen.InjectKey(tcell.KeyRune, 'r', tcell.ModNone)
	d.waitText("○ ready", "The quarterly zebra audit is due on Friday.")
	if out := d.exit(); out.res.SessionID != first.res.SessionID {
		t.Errorf("r resumed %s, want %s", out.res.SessionID, first.res.SessionID)
	}
}
