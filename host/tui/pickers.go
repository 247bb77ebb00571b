package tui

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
)

// modelPicker chooses a model from the provider's advisory catalog;
// Shift+Tab cycles the reasoning efforts the chosen model advertises.
func (u *ui) modelPicker() {
	if u.opts.Models == nil || len(u.opts.Models.Models()) == 0 {
		u.notice(entryError, "the provider has no model catalog; use /model <id>")
		return
	}
	th := u.th
	current, effort := u.cur.agent.Model()
	models := u.opts.Models.Models()
	var p *picker
	selectedModel := func() llm.ModelInfo {
		if i := p.list.current(); i >= 0 && i < len(p.shown) {
			return p.items[p.shown[i]].value.(llm.ModelInfo)
		}
		return llm.ModelInfo{ID: current}
	}
	p = newPicker(u, func() []span {
		e := effort
		if e == "" {
			e = "default"
		}
		return []span{{" Model ", th.bar.Bold(true)}, {"· " + sanitize(u.opts.Models.Name()) + " · reasoning effort " + sanitize(e), th.bar}}
	}, "↑/↓ choose · Shift+Tab reasoning effort · Enter apply · Esc close")
	p.extra = func(ev *tcell.EventKey) bool {
		if ev.Key() != tcell.KeyBacktab {
			return false
		}
		efforts := append([]string{""}, selectedModel().Efforts...)
		next := 0
		for i, e := range efforts {
			if e == effort {
				next = (i + 1) % len(efforts)
			}
		}
		effort = efforts[next]
		return true
	}
	p.choose = func(it pickItem) {
		u.closePage(pagePicker)
		u.setModel(it.value.(llm.ModelInfo).ID, effort)
	}
	var items []pickItem
	sel := 0
	for i, m := range models {
		mark := "  "
		if m.ID == current {
			mark, sel = "● ", i
		}
		name := m.ID
		if m.Name != "" && m.Name != m.ID {
			name += " (" + m.Name + ")"
		}
		var meta []string
		if m.ContextWindow > 0 {
			meta = append(meta, tokens(m.ContextWindow)+" context")
		}
		if len(m.Efforts) > 0 {
			meta = append(meta, "efforts "+strings.Join(m.Efforts, "/"))
		}
		items = append(items, pickItem{
			row:   listRow{left: []span{{" " + mark, th.accent}, {sanitize(name), th.bold}}, right: []span{{strings.Join(meta, " · ") + " ", th.dim}}},
			key:   m.ID + " " + m.Name,
			value: m,
		})
	}
	p.setItems(items)
	p.list.selected = sel
	p.open()
}

// modePicker chooses the session's permission mode.
func (u *ui) modePicker() {
	th := u.th
	current := u.opts.Permissions.Mode(u.cur.agent.ID())
	p := newPicker(u, func() []span {
		return []span{{" Permission mode ", th.bar.Bold(true)}, {"· now " + string(current), th.bar}}
	}, "↑/↓ choose · Enter apply · Esc close")
	p.choose = func(it pickItem) {
		u.closePage(pagePicker)
		u.setMode(it.value.(permissions.Mode))
	}
	var items []pickItem
	sel := 0
	for i, m := range permissions.Modes() {
		mark := "  "
		if m == current {
			mark, sel = "● ", i
		}
		items = append(items, pickItem{
			row:   listRow{left: []span{{" " + mark, th.accent}, {fmt.Sprintf("%-13s", m), th.bold}, {m.Description(), th.base}}},
			key:   string(m) + " " + m.Title(),
			value: m,
		})
	}
	p.setItems(items)
	p.list.selected = sel
	p.open()
}

// showHelp opens the help page.
func (u *ui) showHelp() {
	lines := u.helpLines()
	box := newLinesBox(u.th, nil)
	offset := 0
	box.content = func(int) []line {
		_, _, _, h := box.GetInnerRect()
		offset = min(max(offset, 0), max(len(lines)-h, 0))
		return lines[offset:]
	}
	box.SetBorder(true).SetTitle(" Help · ↑/↓ PgUp/PgDn scroll · Esc closes ").SetTitleAlign(tview.AlignLeft)
	box.SetBorderPadding(0, 0, 1, 1)
	box.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch ev.Key() {
		case tcell.KeyUp:
			offset--
		case tcell.KeyDown:
			offset++
		case tcell.KeyPgUp:
			offset -= 10
		case tcell.KeyPgDn:
			offset += 10
		case tcell.KeyEscape, tcell.KeyEnter:
			u.closePage(pageHelp)
		case tcell.KeyRune:
			if ev.Rune() == 'q' {
				u.closePage(pageHelp)
			}
		}
		return nil
	})
	u.openPage(pageHelp, box, box)
}
