package tui

import (
	"fmt"
	"strings"
)

// entryKind is what an entry of the transcript shows.
type entryKind uint8

const (
	entryUser      entryKind = iota // a prompt the user sent
	entryAssistant                  // reply text (Markdown)
	entryReasoning                  // the model's reasoning (dimmed, toggleable)
	entryTool                       // a tool card
	entryNotice                     // a dim remark: cancelled, retrying, context loaded
	entryError                      // a failure shown inline
	entryMarker                     // compaction checkpoint or fork boundary
)

// cardMode is how tool cards are shown (Ctrl+O cycles it).
type cardMode uint8

const (
	cardsCollapsed cardMode = iota
	cardsExpanded
	cardsHidden
)

func (m cardMode) String() string {
	switch m {
	case cardsExpanded:
		return "expanded"
	case cardsHidden:
		return "hidden"
	default:
		return "collapsed"
	}
}

// viewMode is the display state every entry's layout depends on.
type viewMode struct {
	showReasoning bool
	cards         cardMode
	maxToolLines  int
}

func (m viewMode) key() int {
	k := int(m.cards)<<1 | m.maxToolLines<<3
	if m.showReasoning {
		k |= 1
	}
	return k
}

// entry is one block of the transcript. Entries are created and changed
// only on the UI goroutine; rev changes with every edit so that the cached
// layout is recomputed only for entries that changed or when the width or
// view mode did.
type entry struct {
	kind entryKind
	// seq is the event the entry came from (-1 for local notices); the
	// viewer scrolls to it.
	seq  int
	text string
	tool *toolCard
	// step identifies the model call whose stream produced a live entry.
	step      stepKey
	streaming bool
	rev       int

	cacheW, cacheRev, cacheMode int
	lines                       []line
}

func (e *entry) touch() { e.rev++ }

// layout returns the entry's rows at width, including the blank row that
// separates it from the next entry.
func (e *entry) layout(width int, m viewMode, th *theme) []line {
	if e.lines != nil && e.cacheW == width && e.cacheRev == e.rev && e.cacheMode == m.key() {
		return e.lines
	}
	var paras []para
	switch e.kind {
	case entryUser:
		paras = plainParas(e.text, th.user, []span{{"› ", th.accent}}, []span{{"  ", th.base}})
	case entryAssistant:
		paras = indentParas(markdown(e.text, th.base, th), []span{{"● ", th.accent}}, []span{{"  ", th.base}})
	case entryReasoning:
		if m.showReasoning {
			paras = indentParas(markdown(e.text, th.reasoning, th), []span{{"✻ ", th.dim}}, []span{{"  ", th.base}})
		} else {
			paras = []para{{spans: []span{{fmt.Sprintf("✻ thought for %d words · Ctrl+R shows reasoning", wordCount(e.text)), th.dim}}}}
		}
	case entryTool:
		e.lines = append(e.tool.layout(width, m, th), nil)
		e.cacheW, e.cacheRev, e.cacheMode = width, e.rev, m.key()
		return e.lines
	case entryNotice:
		paras = plainParas(e.text, th.dim, []span{{"· ", th.dim}}, []span{{"  ", th.base}})
	case entryError:
		paras = plainParas(e.text, th.fail, []span{{"✗ ", th.fail}}, []span{{"  ", th.base}})
	case entryMarker:
		paras = []para{{spans: []span{{"┄┄ " + e.text + " ┄┄", th.dim}}}}
	}
	lines := layoutParas(trimBlankParas(paras), width, th)
	if len(lines) > 0 {
		lines = append(lines, nil)
	}
	e.lines = lines
	e.cacheW, e.cacheRev, e.cacheMode = width, e.rev, m.key()
	return e.lines
}

// indentParas gives the first paragraph the marker prefix and every other
// row the continuation indent, in front of the paragraphs' own prefixes.
func indentParas(paras []para, first, cont []span) []para {
	paras = trimBlankParas(paras)
	out := make([]para, len(paras))
	for i, p := range paras {
		lead := cont
		if i == 0 {
			lead = first
		}
		p.prefix = append(append([]span(nil), lead...), p.prefix...)
		p.cont = append(append([]span(nil), cont...), p.cont...)
		out[i] = p
	}
	return out
}

// trimBlankParas drops leading and trailing empty paragraphs so that an
// entry never starts or ends with blank rows of its own.
func trimBlankParas(paras []para) []para {
	isBlank := func(p para) bool {
		if p.rule {
			return false
		}
		for _, s := range p.spans {
			if strings.TrimSpace(s.text) != "" {
				return false
			}
		}
		return true
	}
	for len(paras) > 0 && isBlank(paras[0]) {
		paras = paras[1:]
	}
	for len(paras) > 0 && isBlank(paras[len(paras)-1]) {
		paras = paras[:len(paras)-1]
	}
	return paras
}

func wordCount(s string) int { return len(strings.Fields(s)) }
