package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// headerContent is the top bar: the session's title and workspace.
func (u *ui) headerContent(int) ([]span, []span) {
	th := u.th
	t := u.transcript()
	title := t.title
	if title == "" {
		title = "new session"
	}
	home := homeDir()
	left := []span{{" dsh ", th.bar.Bold(true)}, {oneLine(title), th.bar}, {"  " + sanitize(shortPath(u.workspaceOf(t.header), home)), th.barDim}}
	var right []span
	if u.cur != nil {
		right = []span{{shortID(u.cur.agent.ID()) + " ", th.barDim}}
	}
	return left, right
}

// statusContent is the bottom bar: phase and elapsed time, step and queued
// messages on the left; tokens, cache, context, model and mode on the right.
func (u *ui) statusContent(width int) ([]span, []span) {
	th := u.th
	if u.cur == nil {
		what := "no session"
		if u.opening != "" {
			what = u.opening + "…"
		}
		return []span{{" " + what, th.bar}}, nil
	}
	t := u.cur.t
	st := &t.stats
	running := u.cur.running || st.phase == phaseCompacting
	var left []span
	if u.opening != "" {
		left = append(left, span{" " + u.opening + "…", th.bar})
	} else if running {
		p := st.phase
		if p == phaseIdle {
			p = phaseWaiting
		}
		left = append(left, span{" ● " + p.String(), th.bar.Bold(true)})
		if st.phaseSince > 0 {
			el := u.opts.Now().Sub(time.UnixMilli(st.phaseSince))
			left = append(left, span{" " + formatElapsed(el), th.bar})
		}
		if st.step > 0 {
			left = append(left, span{fmt.Sprintf(" · step %d", st.step), th.barDim})
		}
		if n := len(u.cur.queued); n > 0 {
			left = append(left, span{fmt.Sprintf(" · %d queued", n), th.bar.Bold(true)})
		}
	} else {
		left = append(left, span{" ○ ready", th.bar})
	}

	var facts []statusFact
	add := func(keep int, s string) { facts = append(facts, statusFact{s, keep}) }
	add(1, fmt.Sprintf("↑%s ↓%s", tokens(st.input), tokens(st.output)))
	if rate, ok := st.cacheRate(); ok {
		add(0, fmt.Sprintf("cache %d%%", rate))
	}
	model, effort := u.cur.agent.Model()
	window := st.window
	if window == 0 && u.opts.Models != nil {
		window = u.opts.Models.Model(model).ContextWindow
	}
	switch {
	case window > 0:
		add(2, fmt.Sprintf("ctx %d%% of %s", st.lastContext*100/window, tokens(window)))
	case st.lastContext > 0:
		add(2, fmt.Sprintf("ctx %s", tokens(st.lastContext)))
	default:
		add(2, "ctx unknown")
	}
	add(keepAlways, sanitize(model)+effortSuffix(effort))
	if u.opts.Permissions != nil {
		add(keepAlways+1, string(u.opts.Permissions.Mode(u.cur.agent.ID())))
	}
	var right []span
	for _, text := range fitStatus(facts, cellsWidth(cellsOf(left, th.escape)), width) {
		if len(right) > 0 {
			right = append(right, span{" · ", th.barDim})
		}
		right = append(right, span{text, th.bar})
	}
	return left, append(right, span{" ", th.bar})
}

// statusFact is one fact on the right of the status bar; keep ranks which
// a narrow terminal drops first (the lowest).
type statusFact struct {
	text string
	keep int
}

// keepAlways is the rank from which facts stay however narrow the bar:
// the model and the permission mode.
const keepAlways = 4

// fitStatus returns the texts of the facts shown beside a left part leftW
// cells wide on a bar width cells wide, in their order: all of them when
// they fit (joined by " · ", a trailing space and one cell of gap), else
// without the lowest ranks, one rank at a time, down to the facts ranked
// keepAlways and up, which stay even when they do not fit.
func fitStatus(facts []statusFact, leftW, width int) []string {
	for minKeep := 0; ; minKeep++ {
		var texts []string
		for _, f := range facts {
			if f.keep >= minKeep {
				texts = append(texts, f.text)
			}
		}
		line := strings.Join(texts, " · ") + " "
		if minKeep >= keepAlways || leftW+cellsWidth(cellsOf([]span{{line, tcell.StyleDefault}}, tcell.StyleDefault))+1 <= width {
			return texts
		}
	}
}

func formatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int(d.Seconds())
	if s < 60 {
		return fmt.Sprintf("%ds", s)
	}
	return fmt.Sprintf("%dm%02ds", s/60, s%60)
}

// hintContent is the rule above the input: a transient message, command
// completions, or what is worth knowing now (the bar fills the rest with a
// rule).
func (u *ui) hintContent(int) ([]span, []span) {
	th := u.th
	lead := span{"── ", th.dim}
	if len(u.flash) > 0 {
		return append(append([]span{lead}, u.flash...), span{" ", th.dim}), nil
	}
	text := u.input.GetText()
	if strings.HasPrefix(text, "/") && !strings.ContainsAny(text, " \n") {
		out := []span{lead}
		for i, c := range commandsMatching(text[1:]) {
			if i > 0 {
				out = append(out, span{"  ", th.dim})
			}
			out = append(out, span{"/" + c.name, th.bold})
			if c.args != "" {
				out = append(out, span{" " + c.args, th.dim})
			}
		}
		if len(out) == 1 {
			out = append(out, span{"no such command · /help lists them", th.warn})
		}
		return append(out, span{" ", th.dim}), nil
	}
	var right []span
	switch {
	case u.cur != nil && u.cur.cancelling:
		right = []span{{" cancelling… ", th.warn}, {"──", th.dim}}
	case u.cur != nil && u.cur.stopCompact != nil && len(u.cur.queued) > 0:
		right = []span{{fmt.Sprintf(" %d queued until the compaction ends · Esc cancels it ", len(u.cur.queued)), th.warn}, {"──", th.dim}}
	case u.cur != nil && u.cur.stopCompact != nil:
		right = []span{{" compacting · Esc cancels ", th.dim}, {"──", th.dim}}
	case u.cur != nil && u.cur.running && !u.view.follow:
		right = []span{{" scrolled up · End returns to the bottom · Esc cancels the turn ", th.warn}, {"──", th.dim}}
	case u.cur != nil && u.cur.running && len(u.cur.queued) > 0:
		right = []span{{fmt.Sprintf(" %d queued for the next step · Esc cancels ", len(u.cur.queued)), th.warn}, {"──", th.dim}}
	case u.cur != nil && u.cur.running:
		right = []span{{" Enter steers · Esc cancels ", th.dim}, {"──", th.dim}}
	case !u.view.follow:
		right = []span{{" scrolled up · End returns to the bottom ", th.warn}, {"──", th.dim}}
	case u.cur != nil && len(u.cur.queued) > 0:
		right = []span{{fmt.Sprintf(" %d queued for the next step ", len(u.cur.queued)), th.warn}, {"──", th.dim}}
	}
	return nil, right
}

// planLines is the standing todo list above the input, then the messages
// waiting for the agent to take them.
func (u *ui) planLines(width int) []line {
	th := u.th
	var out []line
	if u.cur != nil {
		for _, q := range u.cur.queued {
			cells := cellsOf([]span{{" ⏵ queued: ", th.warn}, {oneLine(q.text), th.dim}}, th.escape)
			out = append(out, lineOf(clipCells(cells, width, th.dim)))
		}
	}
	for _, td := range u.transcript().todos {
		mark, st := "☐ ", th.base
		switch td.Status {
		case session.TodoInProgress:
			mark, st = "◐ ", th.running
		case session.TodoCompleted:
			mark, st = "☑ ", th.dim
		}
		cells := cellsOf([]span{{" " + mark, st}, {oneLine(td.Content), st}}, th.escape)
		out = append(out, lineOf(clipCells(cells, width, th.dim)))
	}
	return out
}

// planRows is how many rows the plan needs (at most 8).
func (u *ui) planRows() int {
	n := len(u.transcript().todos)
	if u.cur != nil {
		n += len(u.cur.queued)
	}
	return min(n, 8)
}
