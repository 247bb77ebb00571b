package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// transcriptView draws a transcript. It is virtualized: the scroll position
// is an anchor (an entry index and a row inside that entry) and a draw lays
// out only the entries it shows, walking backwards from the end when it
// follows the bottom. Streaming output therefore never moves a reader who
// scrolled up, and the cost of a draw depends on the screen, not the log.
type transcriptView struct {
	*tview.Box
	t    *transcript
	th   *theme
	mode *viewMode

	follow bool
	anchor int // entry index of the first visible row, when not following
	offset int // row within that entry
	// highlight is an entry drawn with a marked background (a search hit);
	// -1 for none.
	highlight int
	// empty is shown when the transcript has no rows.
	empty []line

	// rows maps each drawn screen row to its entry (-1 for none).
	rows   []int
	height int
	width  int
}

func newTranscriptView(t *transcript, th *theme, mode *viewMode) *transcriptView {
	return &transcriptView{Box: tview.NewBox(), t: t, th: th, mode: mode, follow: true, highlight: -1}
}

// setTranscript shows another transcript, following its end.
func (v *transcriptView) setTranscript(t *transcript) {
	v.t, v.follow, v.anchor, v.offset, v.highlight = t, true, 0, 0, -1
}

func (v *transcriptView) rowsOf(i int, width int) []line {
	return v.t.entries[i].layout(width, *v.mode, v.th)
}

// bottom returns the anchor that shows the last height rows.
func (v *transcriptView) bottom(width, height int) (int, int) {
	need := height
	for i := len(v.t.entries) - 1; i >= 0; i-- {
		n := len(v.rowsOf(i, width))
		if n >= need {
			return i, n - need
		}
		need -= n
	}
	return 0, 0
}

// Draw implements tview.Primitive.
func (v *transcriptView) Draw(screen tcell.Screen) {
	v.Box.DrawForSubclass(screen, v)
	x, y, w, h := v.GetInnerRect()
	v.width, v.height = w, h
	v.rows = v.rows[:0]
	if w <= 0 || h <= 0 {
		return
	}
	if v.follow {
		v.anchor, v.offset = v.bottom(w, h)
	}
	v.clampAnchor()
	row := 0
	for i := v.anchor; i < len(v.t.entries) && row < h; i++ {
		lines := v.rowsOf(i, w)
		off := 0
		if i == v.anchor {
			off = v.offset
		}
		for ; off < len(lines) && row < h; off++ {
			drawLine(screen, x, y+row, w, lines[off])
			if i == v.highlight {
				v.mark(screen, x, y+row, w)
			}
			v.rows = append(v.rows, i)
			row++
		}
	}
	if row == 0 && len(v.empty) > 0 {
		for i, l := range v.empty {
			if i >= h {
				break
			}
			drawLine(screen, x, y+i, w, l)
		}
	}
}

// mark gives a drawn row the highlight background.
func (v *transcriptView) mark(screen tcell.Screen, x, y, w int) {
	_, bg, _ := v.th.highlight.Decompose()
	for col := 0; col < w; col++ {
		str, st, w := screen.Get(x+col, y)
		if bg == tcell.ColorDefault {
			st = st.Reverse(true)
		} else {
			st = st.Background(bg)
		}
		if str == "" {
			str = " "
		}
		screen.Put(x+col, y, str, st)
		col += max(w, 1) - 1
	}
}

// clampAnchor keeps the anchor on an existing row after entries shrank.
func (v *transcriptView) clampAnchor() {
	n := len(v.t.entries)
	if n == 0 {
		v.anchor, v.offset = 0, 0
		return
	}
	if v.anchor >= n {
		v.anchor, v.offset = n-1, 0
	}
	if v.offset < 0 {
		v.offset = 0
	}
}

// scroll moves the view by delta rows (negative is up). Reaching the end
// resumes following it.
func (v *transcriptView) scroll(delta int) {
	w, h := v.width, v.height
	if w <= 0 || h <= 0 || len(v.t.entries) == 0 {
		return
	}
	if v.follow {
		v.anchor, v.offset = v.bottom(w, h)
		v.follow = false
	}
	v.clampAnchor()
	v.offset += delta
	for v.offset < 0 && v.anchor > 0 {
		v.anchor--
		v.offset += len(v.rowsOf(v.anchor, w))
	}
	if v.offset < 0 {
		v.offset = 0
	}
	for v.anchor < len(v.t.entries)-1 && v.offset >= len(v.rowsOf(v.anchor, w)) {
		v.offset -= len(v.rowsOf(v.anchor, w))
		v.anchor++
	}
	if v.rowsBelow(w, h+1) <= h {
		v.follow = true
	}
}

// rowsBelow counts the rows from the anchor on, stopping at limit.
func (v *transcriptView) rowsBelow(width, limit int) int {
	n := 0
	for i := v.anchor; i < len(v.t.entries) && n < limit; i++ {
		rows := len(v.rowsOf(i, width))
		if i == v.anchor {
			rows -= v.offset
		}
		n += max(rows, 0)
	}
	return n
}

// page scrolls by a screen, keeping two rows of context.
func (v *transcriptView) page(dir int) { v.scroll(dir * max(v.height-2, 1)) }

// toBottom follows the end again.
func (v *transcriptView) toBottom() { v.follow = true }

// toTop shows the first row.
func (v *transcriptView) toTop() {
	v.follow, v.anchor, v.offset = false, 0, 0
	if v.width > 0 && v.rowsBelow(v.width, v.height+1) <= v.height {
		v.follow = true
	}
}

// show scrolls so that entry i starts at the top, and highlights it.
func (v *transcriptView) show(i int) {
	v.follow, v.anchor, v.offset, v.highlight = false, i, 0, i
	if v.width > 0 && v.rowsBelow(v.width, v.height+1) <= v.height {
		v.follow = true
	}
}

// entryAtRow returns the entry drawn at screen row y, or -1.
func (v *transcriptView) entryAtRow(y int) int {
	_, top, _, _ := v.GetInnerRect()
	r := y - top
	if r < 0 || r >= len(v.rows) {
		return -1
	}
	return v.rows[r]
}

// toggleCard flips the expansion of the tool card at entry i.
func (v *transcriptView) toggleCard(i int) bool {
	if i < 0 || i >= len(v.t.entries) || v.t.entries[i].kind != entryTool {
		return false
	}
	e := v.t.entries[i]
	if e.tool.expanded(*v.mode) {
		e.tool.override = -1
	} else {
		e.tool.override = 1
	}
	e.touch()
	return true
}

// MouseHandler implements tview.Primitive: the wheel scrolls and a click on
// a tool card expands or collapses it.
func (v *transcriptView) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
	return v.WrapMouseHandler(func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
		x, y := event.Position()
		if !v.InRect(x, y) {
			return false, nil
		}
		switch action {
		case tview.MouseScrollUp:
			v.scroll(-3)
			return true, nil
		case tview.MouseScrollDown:
			v.scroll(3)
			return true, nil
		case tview.MouseLeftClick:
			return v.toggleCard(v.entryAtRow(y)), nil
		}
		return false, nil
	})
}
