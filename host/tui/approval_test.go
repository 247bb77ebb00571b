package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

func TestApprovalDialog(t *testing.T) {
	tests := []struct {
		name   string
		answer func(d *screenDriver)
		want   []string
		absent string
	}{
		{
			name:   "allow once runs the command",
			answer: func(d *screenDriver) { d.typeText("y") },
			want:   []string{"✓ Print a greeting", "$ echo approved-output", "│ approved-output"},
		},
		{
			name: "enter on the default button allows once",
			answer: func(d *screenDriver) {
				d.key(tcell.KeyEnter)
			},
			want: []string{"✓ Print a greeting", "│ approved-output"},
		},
		{
			name:   "reject denies the call",
			answer: func(d *screenDriver) { d.typeText("n") },
			want:   []string{"⊘ Print a greeting", "DENIED", "the user rejected tool"},
			absent: "│ approved-output",
		},
		{
			name:   "escape rejects",
			answer: func(d *screenDriver) { d.key(tcell.KeyEscape) },
			want:   []string{"⊘ Print a greeting", "DENIED"},
			absent: "│ approved-output",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend(t, newScripted(
				toolReply("call_1", "bash", `{"command":"echo approved-output","description":"Print a greeting"}`),
				textReply("", "All done."),
			))
			d := startUI(t, b, nil)
			d.submit("greet me")
			screen := d.waitText("Approval needed", "permission mode default asks before running commands",
				"echo approved-output", "Allow once (y)", "Allow for this session (a)", "Reject (n)")
			if !strings.Contains(row(screen, -1), "waiting for your approval") {
				t.Errorf("status while asking = %q", row(screen, -1))
			}
			tt.answer(d)
			screen = d.waitText(append(tt.want, "All done.")...)
			if tt.absent != "" && strings.Contains(screen, tt.absent) {
				t.Errorf("screen shows %q:\n%s", tt.absent, screen)
			}
			if strings.Contains(screen, "Approval needed") {
				t.Errorf("the dialog stayed open:\n%s", screen)
			}
		})
	}
}

func TestAllowForThisSessionIsNotAskedAgain(t *testing.T) {
	b := newBackend(t, newScripted(
		toolReply("call_1", "bash", `{"command":"echo first","description":"First command"}`),
		toolReply("call_2", "bash", `{"command":"echo second","description":"Second command"}`),
		textReply("", "Both ran."),
	))
	d := startUI(t, b, nil)
	d.submit("run two commands")
	d.waitText("Approval needed", "echo first")
	d.typeText("a")
	screen := d.waitText("✓ First command", "✓ Second command", "Both ran.")
	if strings.Contains(screen, "Approval needed") {
		t.Errorf("asked again after allow for this session:\n%s", screen)
	}
}

func TestANarrowApprovalDialogStillShowsRejectAndSaysWhatTheSessionGrantCovers(t *testing.T) {
	b := newBackend(t, newScripted(
		toolReply("call_1", "bash", `{"command":"echo approved-output","description":"Print a greeting"}`),
		textReply("", "All done."),
	))
	d := startUI(t, b, func(o *Options) {
		s := o.Screen.(*sizedScreen)
		s.W, s.H = 50, 24
	})
	d.submit("greet me")
	screen := d.waitText("Approval needed", "echo approved-output", "This session (a) allows every later")
	if !strings.Contains(screen, "whatever it changes (.dsh and .git") {
		t.Errorf("the dialog does not say a command grant covers protected paths too:\n%s", screen)
	}
	if !strings.Contains(screen, "Reject (n)") && !strings.Contains(screen, "n reject") {
		t.Errorf("Reject is not shown at 50 columns:\n%s", screen)
	}
	d.typeText("n")
	d.waitText("DENIED", "All done.")
	d.exit()
}

func TestTheApprovalWaitIsNeitherRunningToolsNorTheToolsDuration(t *testing.T) {
	b := newBackend(t, newScripted(
		toolReply("call_1", "bash", `{"command":"echo approved-output","description":"Print a greeting"}`),
		textReply("", "All done."),
	))
	d := startUI(t, b, nil)
	d.submit("greet me")
	d.waitText("Approval needed", "echo approved-output")
	screen := d.waitText("? Print a greeting", "waiting for your approval")
	if status := row(screen, -1); strings.Contains(status, "running tools") || !strings.Contains(status, "● waiting for your approval") {
		t.Errorf("status while asking = %q", status)
	}
	// The user thinks for a minute and a half.
	b.clock.advance(90 * time.Second)
	d.typeText("y")
	screen = d.waitText("✓ Print a greeting", "All done.")
	card := ""
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "✓ Print a greeting") {
			card = l
		}
	}
	if !strings.Contains(card, "· 0ms") || strings.Contains(card, "1m30s") || strings.Contains(card, "approval") {
		t.Errorf("the card counts the approval wait: %q", card)
	}
}

func TestAnApprovalDialogOpenDuringAResizeFitsTheNewWidth(t *testing.T) {
	b := newBackend(t, newScripted(
		toolReply("call_1", "bash", `{"command":"echo approved-output","description":"Print a greeting"}`),
		textReply("", "All done."),
	))
	d := startUI(t, b, nil)
	d.submit("greet me")
	d.waitText("Approval needed", "Reject (n)")
	d.screen.SetSize(50, 24)
	d.ui.app.QueueEvent(tcell.NewEventResize(50, 24))
	screen := d.waitFor("the dialog at 50 columns", func(s string) bool {
		rows := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		return len(rows) == 24 && strings.Contains(s, "Approval needed")
	})
	var top string
	for _, r := range strings.Split(screen, "\n") {
		if strings.Contains(r, "Approval needed") {
			top = r
		}
	}
	if !strings.Contains(top, "╔") || !strings.Contains(top, "╗") {
		t.Errorf("the dialog's frame is cut at 50 columns: %q\n%s", top, screen)
	}
	if !strings.Contains(screen, "Reject (n)") && !strings.Contains(screen, "n reject") {
		t.Errorf("Reject is not shown after the resize:\n%s", screen)
	}
	d.typeText("n")
	d.waitText("DENIED", "All done.")
}
