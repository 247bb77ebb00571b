package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"

	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

// span is a run of text in one style. Its text is raw: control characters
// are escaped when the span is cut into cells, so every path to the screen
// goes through the same sanitizer.
type span struct {
	text  string
	style tcell.Style
}

// line is one screen row of spans.
type line []span

// cell is one grapheme cluster on screen.
type cell struct {
	g     string
	w     int
	style tcell.Style
}

// tabWidth is how many columns a tab expands to.
const tabWidth = 4

// appendCells cuts s into cells, escaping what must not be interpreted:
// what termtext escapes becomes its visible escape in esc style, invalid UTF-8 becomes
// U+FFFD, tabs become spaces.
func appendCells(dst []cell, s string, style, esc tcell.Style) []cell {
	state := -1
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size <= 1 {
			dst = append(dst, cell{g: "\uFFFD", w: 1, style: esc})
			s = s[max(size, 1):]
			state = -1
			continue
		}
		if r == '\t' {
			for range tabWidth {
				dst = append(dst, cell{g: " ", w: 1, style: style})
			}
			s = s[size:]
			state = -1
			continue
		}
		if e := termtext.Escape(r); e != "" {
			for _, c := range e {
				dst = append(dst, cell{g: string(c), w: 1, style: esc})
			}
			s = s[size:]
			state = -1
			continue
		}
		cluster, rest, width, newState := uniseg.FirstGraphemeClusterInString(s, state)
		// A cluster never swallows a control rune: cut it at the first one so
		// a combining mark cannot smuggle an escape sequence past us.
		if i := strings.IndexFunc(cluster[size:], func(r rune) bool { return termtext.Unsafe(r) || r == '\t' }); i >= 0 {
			cut := size + i
			cluster, rest = s[:cut], s[cut:]
			width = uniseg.StringWidth(cluster)
			newState = -1
		}
		if width == 0 {
			// A lone combining mark or zero-width rune: give it a column so
			// it stays visible and the layout stays predictable.
			width = 1
		}
		dst = append(dst, cell{g: cluster, w: width, style: style})
		s, state = rest, newState
	}
	return dst
}

// cellsOf cuts spans into cells.
func cellsOf(spans []span, esc tcell.Style) []cell {
	var out []cell
	for _, sp := range spans {
		out = appendCells(out, sp.text, sp.style, esc)
	}
	return out
}

// lineOf joins cells back into a line of spans.
func lineOf(cells []cell) line {
	var out line
	var b strings.Builder
	for i, c := range cells {
		if i > 0 && c.style != cells[i-1].style {
			out = append(out, span{b.String(), cells[i-1].style})
			b.Reset()
		}
		b.WriteString(c.g)
	}
	if len(cells) > 0 {
		out = append(out, span{b.String(), cells[len(cells)-1].style})
	}
	return out
}

// wrapCells breaks cells into rows of at most width columns. Word wrap
// breaks after the last space that fits; hard wrap (code, tool output)
// breaks anywhere. Rows after the first start with cont.
func wrapCells(cells []cell, width int, first, cont []cell, hard bool) [][]cell {
	if width < 1 {
		width = 1
	}
	var rows [][]cell
	row := append([]cell(nil), first...)
	rowW := cellsWidth(first)
	contW := cellsWidth(cont)
	if contW >= width {
		cont, contW = nil, 0
	}
	lastSpace := -1 // index in row of the last space that may end it
	for i := 0; i < len(cells); i++ {
		c := cells[i]
		if rowW+c.w > width && len(row) > len(cont) {
			if !hard && lastSpace > 0 && c.g != " " {
				// Move the word after the last space to the next row.
				carry := append([]cell(nil), row[lastSpace+1:]...)
				rows = append(rows, trimRight(row[:lastSpace]))
				row = append(append([]cell(nil), cont...), carry...)
			} else {
				rows = append(rows, trimRight(row))
				row = append([]cell(nil), cont...)
				if !hard && c.g == " " {
					// A space at a break point is swallowed.
					rowW = contW
					lastSpace = -1
					continue
				}
			}
			rowW = cellsWidth(row)
			lastSpace = -1
		}
		row = append(row, c)
		rowW += c.w
		if c.g == " " && len(row)-1 > len(cont) {
			lastSpace = len(row) - 1
		}
	}
	rows = append(rows, row)
	return rows
}

func trimRight(cells []cell) []cell {
	n := len(cells)
	for n > 0 && cells[n-1].g == " " {
		n--
	}
	return cells[:n]
}

func cellsWidth(cells []cell) int {
	w := 0
	for _, c := range cells {
		w += c.w
	}
	return w
}

// clipCells cuts cells to width columns, ending in an ellipsis when cut.
func clipCells(cells []cell, width int, style tcell.Style) []cell {
	if cellsWidth(cells) <= width {
		return cells
	}
	out := make([]cell, 0, width)
	w := 0
	for _, c := range cells {
		if w+c.w > width-1 {
			break
		}
		out = append(out, c)
		w += c.w
	}
	return append(out, cell{g: "…", w: 1, style: style})
}

// drawLine prints l at (x, y), clipped to width columns, and returns the
// columns used. The spans must already be sanitized (laid out lines are).
func drawLine(screen tcell.Screen, x, y, width int, l line) int {
	col := 0
	for _, sp := range l {
		s := sp.text
		state := -1
		for len(s) > 0 {
			cluster, rest, w, newState := uniseg.FirstGraphemeClusterInString(s, state)
			if w == 0 {
				w = 1
			}
			if col+w > width {
				return col
			}
			screen.Put(x+col, y, cluster, sp.style)
			col += w
			s, state = rest, newState
		}
	}
	return col
}

// fillLine paints the rest of a row in style.
func fillLine(screen tcell.Screen, x, y, width int, style tcell.Style) {
	for i := 0; i < width; i++ {
		screen.SetContent(x+i, y, ' ', nil, style)
	}
}

// sanitize returns s with every character that must not reach the terminal
// replaced by its visible escape (as plain text), tabs expanded and invalid
// UTF-8 replaced.
func sanitize(s string) string {
	clean := true
	for _, r := range s {
		if termtext.Unsafe(r) || r == '\t' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, c := range appendCells(nil, s, tcell.StyleDefault, tcell.StyleDefault) {
		b.WriteString(c.g)
	}
	return b.String()
}

// oneLine flattens s to one sanitized line: newlines become spaces.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return sanitize(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " "))
}

// splitLines splits text into lines, treating CRLF as one line break.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}
