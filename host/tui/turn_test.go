package tui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestEscCancelsTheRunningTurnAndKeepsTheSessionUsable(t *testing.T) {
	p := newScripted(heldReply("Working on it, partial"), textReply("", "Second answer."))
	b := newBackend(t, p)
	d := startUI(t, b, nil)
	d.submit("start something long")
	d.waitText("Working on it, partial", "● responding")
	<-p.holding
	d.key(tcell.KeyEscape)
	screen := d.waitText("turn cancelled", "○ ready")
	if !strings.Contains(screen, "reply interrupted") {
		t.Errorf("the interrupted reply is not marked:\n%s", screen)
	}
	if strings.Contains(screen, "cancelling") {
		t.Errorf("\"cancelling…\" stayed after the turn ended:\n%s", screen)
	}
	d.submit("try again")
	d.waitText("Second answer.", "○ ready")
}

func TestAMessageSentDuringATurnSteersIt(t *testing.T) {
	p := newScripted(heldReply("thinking about it"), textReply("", "Steered answer."))
	b := newBackend(t, p)
	d := startUI(t, b, nil)
	d.submit("first")
	d.waitText("thinking about it")
	<-p.holding
	d.submit("also consider this")
	d.waitText("1 queued for the next step")
	// Cancelling drops the queued message; a new prompt starts a turn.
	d.key(tcell.KeyEscape)
	screen := d.waitText("turn cancelled", "○ ready")
	if strings.Contains(screen, "› also consider this") {
		t.Errorf("a dropped steering message entered the log:\n%s", screen)
	}
}

func TestSteeringEntersTheNextStep(t *testing.T) {
	release := make(chan struct{})
	first := textReply("", "First part.")
	p := newScripted(
		scripted{chunks: first.chunks[:2], release: release, tail: first.chunks[2:]},
		textReply("", "Steered answer."),
	)
	b := newBackend(t, p)
	d := startUI(t, b, nil)
	d.submit("first")
	d.waitText("First")
	<-p.holding
	d.submit("also consider this")
	d.waitText("1 queued for the next step")
	close(release)
	screen := d.waitText("› also consider this", "Steered answer.", "○ ready")
	if strings.Index(screen, "First part.") > strings.Index(screen, "› also consider this") {
		t.Errorf("the steering message is not after the first step:\n%s", screen)
	}
	if strings.Contains(screen, "queued") {
		t.Errorf("the queued badge stayed:\n%s", screen)
	}
}

func TestModelFailureShowsInlineAndTheNextPromptWorks(t *testing.T) {
	p := newScripted(
		scripted{chunks: []llm.Chunk{{Type: llm.ChunkFinish, Kind: llm.FinishError, Failure: &session.Failure{Message: "invalid api key", Code: llm.CodeInvalidCredential, Status: 401}}}},
		textReply("", "Recovered."),
	)
	b := newBackend(t, p)
	d := startUI(t, b, nil)
	d.submit("hello")
	d.waitText("✗ model error: invalid api key (INVALID_CREDENTIAL)", "Check the API key", "○ ready")
	d.submit("hello again")
	d.waitText("Recovered.")
}

func TestRetryRunsAFailedTurnAgainAndTheLogHoldsThePromptOnce(t *testing.T) {
	p := newScripted(
		scripted{chunks: []llm.Chunk{{Type: llm.ChunkFinish, Kind: llm.FinishError, Failure: &session.Failure{Message: "invalid api key", Code: llm.CodeInvalidCredential, Status: 401}}}},
		textReply("", "Recovered."),
	)
	b := newBackend(t, p)
	d := startUI(t, b, nil)
	d.submit("/retry")
	d.waitText("nothing to retry: the last turn did not fail")
	d.submit("fix the flaky test")
	d.waitText("✗ model error: invalid api key (INVALID_CREDENTIAL)", "Check the API key, then /retry.", "○ ready")
	d.submit("/retry")
	screen := d.waitText("Recovered.", "○ ready")
	if n := strings.Count(screen, "› fix the flaky test"); n != 1 {
		t.Errorf("the prompt is shown %d times:\n%s", n, screen)
	}
	prompts := 0
	for _, e := range d.ui.cur.agent.Session().Events(0) {
		var m session.Message
		if e.Type == session.TypeUserMessage && e.DecodeData(&m) == nil && messageText(m.Content) == "fix the flaky test" {
			prompts++
		}
	}
	if prompts != 1 {
		t.Errorf("the log holds the prompt %d times, want once", prompts)
	}
}

func TestControlSequencesInModelAndToolTextAreShownEscaped(t *testing.T) {
	b := newBackend(t, nil)
	b.provider = newScripted(
		toolReply("call_1", "bash", `{"command":"printf 'a\\033[2Jb\\007c'","description":"Emit escapes"}`),
		textReply("", "red \x1b[31mALERT\x1b[0m and [red]tag[-] and \x07bell"),
	)
	d := startUI(t, b, func(o *Options) {})
	if err := b.perms.SetMode("00000000-0000-4000-8000-000000000001", "bypass"); err != nil {
		t.Fatal(err)
	}
	d.submit("show me")
	screen := d.waitText(`red \x1b[31mALERT\x1b[0m and [red]tag[-] and \x07bell`, `a\x1b[2Jb\x07c`)
	if strings.ContainsRune(screen, 0x1b) || strings.ContainsRune(screen, 0x07) {
		t.Errorf("a raw control character reached the screen:\n%q", screen)
	}
}

func TestResizingKeepsTheLayout(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", strings.Repeat("word ", 200))))
	var u *ui
	d := startUI(t, b, nil)
	u = d.ui
	d.submit("long answer please")
	d.waitText("○ ready")
	for _, size := range [][2]int{{40, 12}, {130, 40}, {20, 8}, {100, 30}} {
		d.screen.SetSize(size[0], size[1])
		u.app.QueueEvent(tcell.NewEventResize(size[0], size[1]))
		screen := d.waitFor("a frame at the new size", func(s string) bool {
			rows := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
			return len(rows) == size[1] && strings.Contains(rows[len(rows)-1], "ready")
		})
		rows := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
		if !strings.Contains(rows[0], "dsh") {
			t.Errorf("%dx%d: header row = %q", size[0], size[1], rows[0])
		}
		if !strings.HasPrefix(rows[len(rows)-3], "─") {
			t.Errorf("%dx%d: the rule above the input is not where it belongs:\n%s", size[0], size[1], screen)
		}
		for i, r := range rows {
			if w := len([]rune(r)); w > size[0] {
				t.Errorf("%dx%d: row %d is %d columns wide", size[0], size[1], i, w)
			}
		}
	}
}

func TestAToolFailureShowsInlineAndTheTurnGoesOn(t *testing.T) {
	b := newBackend(t, nil)
	b.provider = newScripted(
		toolReply("call_1", "read", `{"file_path":"`+b.cwd+`/missing.txt"}`),
		textReply("", "That file does not exist."),
	)
	d := startUI(t, b, nil)
	d.submit("read the missing file")
	screen := d.waitText("✗ Read missing.txt", "That file does not exist.", "○ ready")
	if !strings.Contains(screen, "missing.txt") || !strings.Contains(screen, "Error:") {
		t.Errorf("the failure is not shown in the card:\n%s", screen)
	}
}

func TestCtrlRTogglesReasoning(t *testing.T) {
	b := newBackend(t, newScripted(textReply("a private chain of thought", "The answer.")))
	d := startUI(t, b, nil)
	d.submit("think")
	d.waitText("✻ a private chain of thought", "The answer.")
	d.keyMod(tcell.KeyCtrlR, 0, tcell.ModCtrl)
	screen := d.waitText("✻ thought for 5 words · Ctrl+R shows reasoning", "reasoning hidden")
	if strings.Contains(screen, "a private chain of thought") {
		t.Errorf("hidden reasoning is still shown:\n%s", screen)
	}
	d.keyMod(tcell.KeyCtrlR, 0, tcell.ModCtrl)
	d.waitText("✻ a private chain of thought", "reasoning shown")
}
