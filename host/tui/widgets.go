package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// bar is a one-row primitive whose content is computed at draw time: a left
// part, clipped when the row is too narrow, and a right-aligned part.
type bar struct {
	*tview.Box
	fill    tcell.Style
	content func(width int) (left, right []span)
	esc     tcell.Style
	// gap, when set, fills the columns between left and right.
	gap *span
}

func newBar(fill, esc tcell.Style, content func(width int) (left, right []span)) *bar {
	return &bar{Box: tview.NewBox(), fill: fill, esc: esc, content: content}
}

// Draw implements tview.Primitive.
func (b *bar) Draw(screen tcell.Screen) {
	x, y, w, h := b.GetRect()
	if w <= 0 || h <= 0 {
		return
	}
	fillLine(screen, x, y, w, b.fill)
	left, right := b.content(w)
	lc, rc := cellsOf(left, b.esc), cellsOf(right, b.esc)
	// The right part (facts) yields to the left (what is happening) only
	// down to a third of the row.
	keepLeft := min(cellsWidth(lc), max(w/3, 12))
	if cellsWidth(rc) > w-keepLeft-1 {
		rc = clipCells(rc, max(w-keepLeft-1, 0), b.fill)
	}
	rw := cellsWidth(rc)
	lc = clipCells(lc, max(w-rw-1, 0), b.fill)
	lw := drawLine(screen, x, y, w, lineOf(lc))
	if b.gap != nil {
		for col := lw; col < w-rw; col++ {
			screen.Put(x+col, y, b.gap.text, b.gap.style)
		}
	}
	if rw > 0 {
		drawLine(screen, x+w-rw, y, rw, lineOf(rc))
	}
}

// linesBox draws a fixed list of lines computed at draw time.
type linesBox struct {
	*tview.Box
	th      *theme
	content func(width int) []line
}

func newLinesBox(th *theme, content func(width int) []line) *linesBox {
	return &linesBox{Box: tview.NewBox(), th: th, content: content}
}

// Draw implements tview.Primitive.
func (b *linesBox) Draw(screen tcell.Screen) {
	b.Box.DrawForSubclass(screen, b)
	x, y, w, h := b.GetInnerRect()
	for i, l := range b.content(w) {
		if i >= h {
			break
		}
		drawLine(screen, x, y+i, w, l)
	}
}

// listView is a selectable list of one-row items drawn with the UI's own
// line renderer, so item text is sanitized like the transcript.
type listView struct {
	*tview.Box
	th       *theme
	rows     []listRow
	selected int
	offset   int
	// activate is called for a double click or by the owner on Enter.
	activate func(i int)
}

// listRow is one row; a header row is drawn bold and cannot be selected.
type listRow struct {
	left, right []span
	header      bool
	disabled    bool
}

func newListView(th *theme) *listView {
	return &listView{Box: tview.NewBox(), th: th}
}

func (l *listView) setRows(rows []listRow) {
	l.rows = rows
	if l.selected >= len(rows) {
		l.selected = len(rows) - 1
	}
	if l.selected < 0 {
		l.selected = 0
	}
	l.settle(1)
}

// settle moves the selection off header rows in direction dir.
func (l *listView) settle(dir int) {
	if len(l.rows) == 0 {
		l.selected = 0
		return
	}
	for i := 0; i < len(l.rows); i++ {
		if !l.rows[l.selected].header {
			return
		}
		next := l.selected + dir
		if next < 0 || next >= len(l.rows) {
			dir = -dir
			next = l.selected + dir
			if next < 0 || next >= len(l.rows) {
				return
			}
		}
		l.selected = next
	}
}

func (l *listView) move(delta int) {
	if len(l.rows) == 0 {
		return
	}
	dir := 1
	if delta < 0 {
		dir = -1
	}
	l.selected = min(max(l.selected+delta, 0), len(l.rows)-1)
	l.settle(dir)
}

// current returns the selected row index, or -1.
func (l *listView) current() int {
	if len(l.rows) == 0 || l.rows[l.selected].header {
		return -1
	}
	return l.selected
}

// Draw implements tview.Primitive.
func (l *listView) Draw(screen tcell.Screen) {
	l.Box.DrawForSubclass(screen, l)
	x, y, w, h := l.GetInnerRect()
	if h <= 0 {
		return
	}
	if l.selected < l.offset {
		l.offset = l.selected
	}
	if l.selected >= l.offset+h {
		l.offset = l.selected - h + 1
	}
	l.offset = max(0, min(l.offset, len(l.rows)-h))
	for r := 0; r < h && l.offset+r < len(l.rows); r++ {
		i := l.offset + r
		row := l.rows[i]
		left, right := row.left, row.right
		if row.disabled {
			left = restyleDim(left, l.th.dim)
		}
		if i == l.selected && !row.header {
			fillLine(screen, x, y+r, w, l.th.selected)
			left = restyle(left, l.th.selected)
			right = restyle(right, l.th.selected)
		}
		b := newBar(tcell.StyleDefault, l.th.escape, func(int) ([]span, []span) { return left, right })
		if i == l.selected && !row.header {
			b.fill = l.th.selected
		}
		b.SetRect(x, y+r, w, 1)
		b.Draw(screen)
	}
}

// restyleDim draws spans in the dim style, for rows that cannot be chosen.
func restyleDim(spans []span, dim tcell.Style) []span {
	out := make([]span, len(spans))
	for i, s := range spans {
		out[i] = span{s.text, dim}
	}
	return out
}

// restyle keeps attributes but moves spans onto the selection colours.
func restyle(spans []span, sel tcell.Style) []span {
	fg, bg, _ := sel.Decompose()
	out := make([]span, len(spans))
	for i, s := range spans {
		st := s.style
		if bg == tcell.ColorDefault {
			st = st.Reverse(true)
		} else {
			st = st.Background(bg).Foreground(fg)
		}
		out[i] = span{s.text, st}
	}
	return out
}

// MouseHandler implements tview.Primitive: click selects, double click
// activates, the wheel moves.
func (l *listView) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
	return l.WrapMouseHandler(func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
		x, y := event.Position()
		if !l.InRect(x, y) {
			return false, nil
		}
		_, top, _, _ := l.GetInnerRect()
		switch action {
		case tview.MouseScrollUp:
			l.move(-1)
			return true, nil
		case tview.MouseScrollDown:
			l.move(1)
			return true, nil
		case tview.MouseLeftClick, tview.MouseLeftDoubleClick:
			i := l.offset + y - top
			if i < 0 || i >= len(l.rows) || l.rows[i].header {
				return true, nil
			}
			l.selected = i
			if action == tview.MouseLeftDoubleClick && l.activate != nil {
				l.activate(i)
			}
			return true, nil
		}
		return false, nil
	})
}
