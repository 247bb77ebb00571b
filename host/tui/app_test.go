package tui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/llm/replay"
)

func TestAPromptStreamsTheReplayedReplyIntoTheTranscript(t *testing.T) {
	p, err := replay.New(replay.Config{Fixtures: []string{filepath.Join("testdata", "replay-hello.jsonl")}})
	if err != nil {
		t.Fatal(err)
	}
	b := newBackend(t, p)
	d := startUI(t, b, nil)
	d.waitText("Type a message and press Enter", "○ ready")
	d.submit("Say hello")
	screen := d.waitText("› Say hello", "● Hello from the replay provider.", "✻ The user wants a greeting.", "○ ready")
	if strings.Contains(screen, "**replay**") {
		t.Errorf("bold markers were not rendered:\n%s", screen)
	}
	// Tokens and cache hits: 1200 uncached in, 12 out, 3600 of 4800 cached.
	status := row(screen, -1)
	for _, want := range []string{"↑1.2k ↓12", "cache 75%", "test-model"} {
		if !strings.Contains(status, want) {
			t.Errorf("status line %q lacks %q", status, want)
		}
	}
	if err := p.Check(); err != nil {
		t.Errorf("replay script not fully consumed: %v", err)
	}
}

func TestCtrlCTwiceExitsAndReportsTheResumeCommand(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "hi")))
	d := startUI(t, b, nil)
	d.submit("hello")
	d.waitText("○ ready", "hi")
	d.keyMod(tcell.KeyCtrlC, 0, tcell.ModCtrl)
	d.waitText("Press Ctrl+C again to exit")
	out := d.exit()
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	id := "00000000-0000-4000-8000-000000000001"
	if out.Res.SessionID != id || out.Res.ResumeCommand != "dsh tui --resume "+id {
		t.Errorf("result = %+v", out.Res)
	}
	if _, err := b.store.Stat(t.Context(), id); err != nil {
		t.Errorf("the session was not persisted: %v", err)
	}
	b.mu.Lock()
	open := len(b.agents)
	b.mu.Unlock()
	if open != 0 {
		t.Errorf("%d sessions still open after exit; Run must close the session it shows", open)
	}
}

func TestAnUntouchedSessionPrintsNoResumeCommand(t *testing.T) {
	b := newBackend(t, newScripted())
	d := startUI(t, b, nil)
	out := d.exit()
	if out.Err != nil || out.Res.SessionID == "" || out.Res.ResumeCommand != "" {
		t.Errorf("result = %+v, %v", out.Res, out.Err)
	}
}

func TestAWarningIsShownAsSoonAsTheUIOpens(t *testing.T) {
	b := newBackend(t, newScripted())
	d := startUI(t, b, func(o *Options) {
		o.Warning = "set DEEPSEEK_API_KEY (or llm.api_key) to use the deepseek provider; add --profile demo"
	})
	d.waitText("set DEEPSEEK_API_KEY", "--profile demo")
	if out := d.exit(); out.Err != nil {
		t.Fatal(out.Err)
	}
}

func TestPickSessionOpensTheResumePickerAtStart(t *testing.T) {
	b := newBackend(t, newScripted())
	d := startUI(t, b, func(o *Options) { o.PickSession = true })
	d.waitText("Resume a session", "this workspace")
	if out := d.exit(); out.Err != nil {
		t.Fatal(out.Err)
	}
}

func TestEveryNewlineKeyAddsALineAndTheInputShowsItsFirstLine(t *testing.T) {
	for _, c := range []struct {
		name string
		key  tcell.Key
		r    rune
		mod  tcell.ModMask
	}{
		{"Alt+Enter", tcell.KeyEnter, 0, tcell.ModAlt},
		{"Shift+Enter", tcell.KeyEnter, 0, tcell.ModShift},
		{"ESC CR as tmux sends Alt+Enter", tcell.KeyRune, 'm', tcell.ModAlt | tcell.ModCtrl},
		{"ESC LF", tcell.KeyRune, 'j', tcell.ModAlt | tcell.ModCtrl},
		{"Ctrl+J as a bare LF", tcell.KeyLF, 0, tcell.ModCtrl},
		{"Ctrl+J", tcell.KeyCtrlJ, 0, tcell.ModCtrl},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newScripted()
			b := newBackend(t, p)
			d := startUI(t, b, nil)
			d.waitText("○ ready")
			d.typeText("alpha")
			d.keyMod(c.key, c.r, c.mod)
			d.typeText("beta")
			d.keyMod(c.key, c.r, c.mod)
			d.typeText("gamma")
			screen := d.waitText("gamma")
			// The input sits right above the status line.
			if !strings.HasPrefix(row(screen, -4), "alpha") {
				t.Errorf("the input's first line is not shown above beta and gamma:\n%s", screen)
			}
			if !strings.HasPrefix(row(screen, -3), "beta") || !strings.HasPrefix(row(screen, -2), "gamma") {
				t.Errorf("the input does not show three lines:\n%s", screen)
			}
			p.mu.Lock()
			calls := p.calls
			p.mu.Unlock()
			if calls != 0 || strings.Contains(screen, "› alpha") {
				t.Errorf("%s sent the message", c.name)
			}
			d.exit()
		})
	}
}
