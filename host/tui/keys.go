package tui

import (
	"context"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// maxInputRows is how tall the input grows before it scrolls.
const maxInputRows = 8

// capture sees every key first. Ctrl+C is handled here whatever has focus;
// overlays get their keys through focus; the main page's keys are below.
func (u *ui) capture(ev *tcell.EventKey) *tcell.EventKey {
	if ev.Key() == tcell.KeyCtrlC {
		u.interrupt()
		return nil
	}
	u.ctrlC = false
	u.flash = nil
	if u.topPage() != "" {
		return ev
	}
	return u.mainKey(ev)
}

// interrupt is Ctrl+C: the first press stops what is going on (a dialog, a
// running turn, a half-typed message) and arms; a second press in a row
// exits.
func (u *ui) interrupt() {
	if u.ctrlC {
		u.exit()
		return
	}
	u.ctrlC = true
	switch {
	case u.topPage() == pageApproval:
		u.answerApproval(rejectedAnswer)
	case u.topPage() != "":
		u.closePage(u.topPage())
	case u.cur != nil && u.cur.agent.Status() == agent.StatusRunning:
		u.cancelTurn()
	case u.input.GetText() != "":
		u.input.SetText("", false)
	}
	u.setFlash(span{"Press Ctrl+C again to exit", u.th.warn})
}

func (u *ui) mainKey(ev *tcell.EventKey) *tcell.EventKey {
	mods := ev.Modifiers()
	if isNewlineKey(ev) {
		return tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModNone)
	}
	switch ev.Key() {
	case tcell.KeyEnter:
		u.submit()
		return nil
	case tcell.KeyEscape:
		switch {
		case u.cur == nil:
		case u.cur.agent.Status() == agent.StatusRunning:
			u.cancelTurn()
		case u.cur.stopCompact != nil:
			// Messages sent meanwhile stay queued: the agent takes
			// them once the compaction has stopped.
			u.cur.stopCompact()
			u.cur.cancelling = true
		}
		return nil
	case tcell.KeyPgUp:
		u.view.page(-1)
		return nil
	case tcell.KeyPgDn:
		u.view.page(1)
		return nil
	case tcell.KeyHome:
		if mods&tcell.ModCtrl != 0 || u.input.GetText() == "" {
			u.view.toTop()
			return nil
		}
	case tcell.KeyEnd:
		if mods&tcell.ModCtrl != 0 || u.input.GetText() == "" {
			u.view.toBottom()
			return nil
		}
	case tcell.KeyUp:
		if mods&tcell.ModShift != 0 {
			u.view.scroll(-1)
			return nil
		}
		if row, _, _, _ := u.input.GetCursor(); row == 0 {
			u.historyMove(-1)
			return nil
		}
	case tcell.KeyDown:
		if mods&tcell.ModShift != 0 {
			u.view.scroll(1)
			return nil
		}
		if row, _, _, _ := u.input.GetCursor(); row >= strings.Count(u.input.GetText(), "\n") {
			u.historyMove(1)
			return nil
		}
	case tcell.KeyTab:
		if u.complete() {
			return nil
		}
	case tcell.KeyCtrlO:
		u.mode.cards = (u.mode.cards + 1) % 3
		u.setFlash(span{"tool cards " + u.mode.cards.String(), u.th.dim})
		return nil
	case tcell.KeyCtrlR:
		u.mode.showReasoning = !u.mode.showReasoning
		state := "hidden"
		if u.mode.showReasoning {
			state = "shown"
		}
		u.setFlash(span{"reasoning " + state, u.th.dim})
		return nil
	case tcell.KeyCtrlL:
		u.app.Sync()
		return nil
	case tcell.KeyCtrlD:
		if u.input.GetText() == "" && (u.cur == nil || u.cur.agent.Status() != agent.StatusRunning) {
			u.exit()
			return nil
		}
	}
	return ev
}

// cancelTurn is Esc: it aborts the running turn and drops queued messages.
// The hint says "cancelling…" until the turn has stopped.
func (u *ui) cancelTurn() {
	u.cur.agent.Cancel(session.CancelCause{Kind: agent.CauseUser})
	u.cur.queued = nil
	u.cur.cancelling = true
}

// submit sends the input: a command when it starts with "/" (a leading
// "//" sends a literal slash), else a prompt, steering a running turn.
func (u *ui) submit() {
	text := u.input.GetText()
	if strings.TrimSpace(text) == "" {
		return
	}
	u.input.SetText("", false)
	if len(u.history) == 0 || u.history[len(u.history)-1] != text {
		u.history = append(u.history, text)
		u.remember(text)
	}
	u.histPos, u.draft = len(u.history), ""
	trimmed := strings.TrimSpace(text)
	if strings.HasPrefix(trimmed, "/") && !strings.HasPrefix(trimmed, "//") {
		u.command(trimmed)
		return
	}
	if strings.HasPrefix(trimmed, "//") {
		text = strings.Replace(text, "//", "/", 1)
	}
	u.send(text)
}

func (u *ui) send(text string) {
	if u.cur == nil {
		u.notice(entryError, "no session is open: /new starts one, /resume continues one")
		return
	}
	msg := agent.UserText(text, u.opts.NewID())
	if u.cur.agent.Status() == agent.StatusRunning {
		u.cur.queue(msg.ID, text)
		u.cur.agent.Steer(msg)
		return
	}
	if u.cur.stopCompact != nil {
		// The agent holds it until the compaction ends.
		u.cur.queue(msg.ID, text)
	}
	u.cur.agent.Followup(msg)
	u.cur.syncRunning()
	u.view.toBottom()
}

// historyMove walks the prompt history; the unsent draft is kept.
func (u *ui) historyMove(dir int) {
	if len(u.history) == 0 {
		return
	}
	if u.histPos == len(u.history) {
		u.draft = u.input.GetText()
	}
	pos := min(max(u.histPos+dir, 0), len(u.history))
	if pos == u.histPos {
		return
	}
	u.histPos = pos
	if pos == len(u.history) {
		u.input.SetText(u.draft, true)
		return
	}
	u.input.SetText(u.history[pos], true)
}

// inputChanged grows the input with its content.
func (u *ui) inputChanged() {
	rows := min(strings.Count(u.input.GetText(), "\n")+1, maxInputRows)
	if rows != u.inputRow {
		u.inputRow = rows
		u.layout.ResizeItem(u.input, rows, 0)
	}
}

// fitInput undoes a scroll the input no longer needs: the text area keeps
// the offset it computed for its old height when it grows, which hid the
// first lines behind blank rows. Called before every draw.
func (u *ui) fitInput() {
	if off, _ := u.input.GetOffset(); off > 0 {
		if _, _, row, _ := u.input.GetCursor(); row < u.inputRow {
			u.input.SetOffset(0, 0)
		}
	}
}

// isNewlineKey reports the keys that insert a new line in the input
// instead of sending: Alt+Enter, Shift+Enter and Ctrl+Enter as terminals
// with modern key reporting send them, Ctrl+J (a bare LF), and ESC CR or
// ESC LF, which tmux and many terminals send for Alt+Enter and tcell
// reports as Alt+Ctrl+M or Alt+Ctrl+J.
func isNewlineKey(ev *tcell.EventKey) bool {
	mods := ev.Modifiers()
	switch ev.Key() {
	case tcell.KeyEnter:
		return mods&(tcell.ModAlt|tcell.ModShift|tcell.ModCtrl) != 0
	case tcell.KeyLF, tcell.KeyCtrlJ, tcell.KeyCtrlM:
		return true
	case tcell.KeyRune:
		r := ev.Rune()
		return (r == 'm' || r == 'j') && mods&(tcell.ModAlt|tcell.ModCtrl) == tcell.ModAlt|tcell.ModCtrl
	}
	return false
}

// complete finishes a command name on Tab.
func (u *ui) complete() bool {
	text := u.input.GetText()
	if !strings.HasPrefix(text, "/") || strings.ContainsAny(text, " \n") {
		return false
	}
	matches := commandsMatching(text[1:])
	if len(matches) == 0 {
		return true
	}
	if len(matches) == 1 {
		u.input.SetText("/"+matches[0].name+" ", true)
		return true
	}
	prefix := matches[0].name
	for _, m := range matches[1:] {
		for !strings.HasPrefix(m.name, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	u.input.SetText("/"+prefix, true)
	return true
}

// remember keeps a sent line for later runs, off the UI goroutine.
func (u *ui) remember(text string) {
	u.recalled = append(u.recalled, text)
	u.prompts.enqueue(u.ws.Given, text)
	u.goBackground(func(context.Context) {
		if err := u.prompts.flush(); err != nil {
			u.opts.Log.Warn("the prompt history could not be written", "file", u.opts.PromptHistory, "err", err)
		}
	})
}
