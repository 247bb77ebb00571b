package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// cardStatus is where a tool call is.
type cardStatus uint8

const (
	cardRunning cardStatus = iota
	cardOK
	cardFailed
	cardDenied
	cardAborted
)

// toolCard is the transcript's view of one tool call: a title line and a
// body (the command, the diff of an edit, the output) shown as a head/tail
// preview unless expanded.
type toolCard struct {
	callID string
	name   string
	args   string
	call   *tools.Call
	// present resolves the tool's presentation lazily; nil when the
	// registry has no such tool.
	present func(*tools.Call) *tools.CallView
	view    *tools.CallView
	// viewLive says view was captured before the call ran, so its diff is
	// the real one; a view resolved later (history) keeps only its title.
	viewLive bool
	resolved bool

	status  cardStatus
	errCode string
	output  string
	// started is when the body started (seen live only) or else when the
	// model asked for the call; ended is its result's time (Unix ms).
	started int64
	ended   int64
	// asking says the call waits for the user's approval.
	asking bool
	// live is the tail of the output the running body wrote; liveCut says
	// its start was dropped. A cancelled call keeps showing it.
	live    []byte
	liveCut bool
	// override is the card's own expansion (+1 expanded, -1 collapsed, 0
	// the global mode); a click toggles it.
	override int8
}

func (c *toolCard) resolve() {
	if c.resolved {
		return
	}
	c.resolved = true
	if c.view != nil || c.present == nil || c.call == nil {
		return
	}
	c.view = safePresent(c.present, c.call)
}

// safePresent calls a tool's presenter, which must never take the UI down.
func safePresent(present func(*tools.Call) *tools.CallView, call *tools.Call) (v *tools.CallView) {
	defer func() {
		if recover() != nil {
			v = nil
		}
	}()
	return present(call)
}

func (c *toolCard) title() string {
	c.resolve()
	if c.view != nil && strings.TrimSpace(c.view.Title) != "" {
		return c.view.Title
	}
	return c.name
}

func (c *toolCard) kind() string {
	if c.view != nil && c.view.Kind != "" {
		return c.view.Kind
	}
	return tools.KindOther
}

// argsObject decodes the call's arguments as a JSON object of strings, for
// the presentation fallbacks below.
func (c *toolCard) argString(key string) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(c.args), &m) != nil {
		return "", false
	}
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// bodyLine is one logical line of a card's body.
type bodyLine struct {
	text string
	kind byte // ' ' plain, '-', '+', '@' diff, '$' command, '!' error
}

// body is everything below the title line.
func (c *toolCard) body() []bodyLine {
	c.resolve()
	var out []bodyLine
	if c.kind() == tools.KindExecute {
		if cmd, ok := c.argString("command"); ok {
			for i, l := range splitLines(cmd) {
				if i == 0 {
					l = "$ " + l
				} else {
					l = "  " + l
				}
				out = append(out, bodyLine{l, '$'})
			}
		}
	}
	for _, d := range c.diff() {
		text := d.text
		if d.op != '@' {
			text = string(d.op) + text
		}
		out = append(out, bodyLine{text, d.op})
	}
	if len(c.live) > 0 && (c.status == cardRunning || c.status == cardAborted) {
		lines := splitLines(string(c.live))
		if c.liveCut {
			// The first line is a fragment.
			lines[0] = "…"
		}
		for _, l := range lines {
			out = append(out, bodyLine{l, ' '})
		}
	}
	if c.status != cardRunning && strings.TrimSpace(c.output) != "" && !(c.status == cardOK && c.kind() == tools.KindEdit && len(out) > 0) {
		kind := byte(' ')
		if c.status != cardOK {
			kind = '!'
		}
		for _, l := range splitLines(c.output) {
			out = append(out, bodyLine{l, kind})
		}
	}
	return out
}

// diff is the change an edit makes: the tool's own diff when it was
// captured before the call ran, else the one its arguments describe.
func (c *toolCard) diff() []diffLine {
	if c.viewLive && c.view != nil && c.view.Diff != nil {
		old := ""
		if c.view.Diff.OldText != nil {
			old = *c.view.Diff.OldText
		}
		return unifiedDiff(old, c.view.Diff.NewText, 3)
	}
	if c.kind() != tools.KindEdit {
		return nil
	}
	if o, ok := c.argString("old_string"); ok {
		n, _ := c.argString("new_string")
		return snippetDiff(o, n)
	}
	if content, ok := c.argString("content"); ok {
		return snippetDiff("", content)
	}
	return nil
}

func (c *toolCard) expanded(m viewMode) bool {
	switch c.override {
	case 1:
		return true
	case -1:
		return false
	}
	return m.cards == cardsExpanded
}

// layout renders the card: the title row, then the body as a head/tail
// preview clipped to one row per line, or in full and wrapped when
// expanded. Hidden mode keeps only the title row.
func (c *toolCard) layout(width int, m viewMode, th *theme) []line {
	glyph, gs := "⋯", th.running
	switch c.status {
	case cardRunning:
		if c.asking {
			glyph, gs = "?", th.warn
		}
	case cardOK:
		glyph, gs = "✓", th.ok
	case cardFailed:
		glyph, gs = "✗", th.fail
	case cardDenied:
		glyph, gs = "⊘", th.warn
	case cardAborted:
		glyph, gs = "⊘", th.dim
	}
	head := []span{{glyph + " ", gs}, {c.title(), th.bold}, {"  " + c.name, th.dim}}
	if c.ended > 0 && c.started > 0 {
		head = append(head, span{" · " + formatDuration(time.Duration(c.ended-c.started)*time.Millisecond), th.dim})
	}
	if c.errCode != "" {
		head = append(head, span{" · " + c.errCode, gs})
	}
	if c.asking {
		head = append(head, span{" · waiting for your approval", gs})
	}
	esc := th.escape
	out := []line{lineOf(clipCells(cellsOf(head, esc), width, th.dim))}
	if m.cards == cardsHidden && c.override != 1 {
		return out
	}
	body := c.body()
	gutter := []span{{"  │ ", th.dim}}
	styleOf := func(k byte) tcell.Style {
		switch k {
		case '-':
			return th.removed
		case '+':
			return th.added
		case '@':
			return th.hunk
		case '$':
			return th.bold
		case '!':
			return th.fail
		}
		return th.base
	}
	render := func(b bodyLine, wrap bool) []line {
		first := cellsOf(gutter, esc)
		cells := cellsOf([]span{{b.text, styleOf(b.kind)}}, esc)
		if !wrap {
			return []line{lineOf(append(first, clipCells(cells, max(width-cellsWidth(first), 1), th.dim)...))}
		}
		var rows []line
		for _, r := range wrapCells(cells, width, first, first, true) {
			rows = append(rows, lineOf(r))
		}
		return rows
	}
	limit := m.maxToolLines
	if len(c.diff()) > 0 {
		// An edit's diff is what the user most wants to check.
		limit = max(2*limit, 12)
	}
	// Hiding a single line would cost as much room as showing it.
	if c.expanded(m) || len(body) <= limit+1 {
		for _, b := range body {
			out = append(out, render(b, c.expanded(m))...)
		}
		return out
	}
	headN := max(1, limit/3)
	tailN := max(limit-headN, 1)
	for _, b := range body[:headN] {
		out = append(out, render(b, false)...)
	}
	hidden := len(body) - headN - tailN
	out = append(out, lineOf(cellsOf([]span{{"  │ ", th.dim}, {fmt.Sprintf("… %d more lines · Ctrl+O or click expands", hidden), th.dim.Italic(true)}}, esc)))
	for _, b := range body[len(body)-tailN:] {
		out = append(out, render(b, false)...)
	}
	return out
}

// finish records the call's result.
func (c *toolCard) finish(r session.ToolResult, at int64) {
	c.ended = at
	c.output = resultText(r.Message)
	c.status = cardOK
	if r.Error != nil {
		c.errCode = r.Error.Code
		switch {
		case r.Error.Code == tools.CodeDenied:
			c.status = cardDenied
		case r.Error.Code == tools.CodeAborted || r.Error.Code == tools.CodeAbortedBeforeDispatch:
			c.status = cardAborted
		default:
			c.status = cardFailed
		}
	} else if isErrorResult(r.Message) {
		c.status = cardFailed
	}
}

// resultText is the text of a tool/result message's tool-result block.
func resultText(m session.Message) string {
	var parts []string
	for _, b := range m.Content {
		if b.Type != session.BlockToolResult {
			continue
		}
		for _, in := range b.Content {
			switch in.Type {
			case session.BlockText:
				parts = append(parts, in.Text)
			default:
				parts = append(parts, "["+in.Type+"]")
			}
		}
	}
	return strings.Join(parts, "\n")
}

func isErrorResult(m session.Message) bool {
	for _, b := range m.Content {
		if b.Type == session.BlockToolResult && b.IsError {
			return true
		}
	}
	return false
}

// formatDuration shows a duration the way a status line wants it.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}
