package tui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
)

// para is one logical line of rendered text, before wrapping: a prefix for
// its first row, one for continuation rows, and its spans. Hard paragraphs
// (code, tables) break anywhere and keep their spacing; rule paragraphs fill
// the width with a horizontal line.
type para struct {
	prefix []span
	cont   []span
	spans  []span
	hard   bool
	rule   bool
}

var (
	reFence   = lazyregexp.New("^ {0,3}(`{3,}|~{3,})\\s*([^`\\s]*)")
	reHeading = lazyregexp.New(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	reRule    = lazyregexp.New(`^ {0,3}([-*_])(\s*([-*_])){2,}\s*$`)
	reList    = lazyregexp.New(`^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$`)
	reQuote   = lazyregexp.New(`^\s{0,3}>\s?(.*)$`)
)

// markdown renders the Markdown-ish subset dsh shows for replies and
// reasoning: ATX headings, bullet and numbered lists (nested by
// indentation), block quotes, fenced code blocks, horizontal rules, and the
// inline forms `code`, **bold**, *italic* and [text](url). Everything else
// is shown as written; nothing in src is ever interpreted by the terminal.
func markdown(src string, base tcell.Style, th *theme) []para {
	var out []para
	var fence string // the open fence marker, "" outside code
	for _, ln := range splitLines(src) {
		if fence != "" {
			trimmed := strings.TrimSpace(ln)
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
				continue
			}
			out = append(out, para{
				prefix: []span{{"▏ ", th.dim}},
				cont:   []span{{"▏ ", th.dim}},
				spans:  []span{{ln, th.code}},
				hard:   true,
			})
			continue
		}
		if m := reFence.FindStringSubmatch(ln); m != nil {
			fence = m[1]
			if m[2] != "" {
				out = append(out, para{prefix: []span{{"▏ ", th.dim}}, spans: []span{{m[2], th.dim.Italic(true)}}})
			}
			continue
		}
		switch {
		case strings.TrimSpace(ln) == "":
			out = append(out, para{})
		case reRule.MatchString(ln):
			out = append(out, para{rule: true, spans: []span{{"", th.dim}}})
		case reHeading.MatchString(ln):
			m := reHeading.FindStringSubmatch(ln)
			st := th.heading
			if len(m[1]) == 1 {
				st = st.Underline(true)
			}
			out = append(out, para{spans: inline(m[2], st, th)})
		case reQuote.MatchString(ln):
			m := reQuote.FindStringSubmatch(ln)
			bar := []span{{"│ ", th.quote}}
			out = append(out, para{prefix: bar, cont: bar, spans: inline(m[1], th.quote, th)})
		case reList.MatchString(ln):
			m := reList.FindStringSubmatch(ln)
			indent := strings.Repeat(" ", min(len(strings.ReplaceAll(m[1], "\t", "    ")), 12))
			bullet := "• "
			if m[2][0] >= '0' && m[2][0] <= '9' {
				bullet = m[2] + " "
			}
			out = append(out, para{
				prefix: []span{{indent, base}, {bullet, th.accent}},
				cont:   []span{{indent + strings.Repeat(" ", utf8.RuneCountInString(bullet)), base}},
				spans:  inline(m[3], base, th),
			})
		case strings.HasPrefix(strings.TrimSpace(ln), "|"):
			out = append(out, para{spans: []span{{ln, base}}, hard: true})
		default:
			out = append(out, para{spans: inline(ln, base, th)})
		}
	}
	return out
}

// inline renders the inline forms of one line.
func inline(s string, base tcell.Style, th *theme) []span {
	var out []span
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, span{text.String(), base})
			text.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			text.WriteByte(s[i+1])
			i += 2
			continue
		case c == '`':
			n := runOf(s[i:], '`')
			if end := strings.Index(s[i+n:], strings.Repeat("`", n)); end >= 0 {
				flush()
				code := s[i+n : i+n+end]
				if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' {
					code = code[1 : len(code)-1]
				}
				out = append(out, span{code, th.inline})
				i += n + end + n
				continue
			}
			text.WriteString(s[i : i+n])
			i += n
			continue
		case (c == '*' || c == '_') && i+1 < len(s) && s[i+1] == c:
			delim := s[i : i+2]
			if end := strings.Index(s[i+2:], delim); end > 0 && s[i+2] != ' ' && s[i+2+end-1] != ' ' {
				flush()
				out = append(out, inline(s[i+2:i+2+end], base.Bold(true), th)...)
				i += 2 + end + 2
				continue
			}
		case c == '*' || c == '_':
			if end := closingEmphasis(s, i); end > 0 {
				flush()
				out = append(out, inline(s[i+1:end], base.Italic(true), th)...)
				i = end + 1
				continue
			}
		case c == '[':
			if label, url, n, ok := link(s[i:]); ok {
				flush()
				out = append(out, span{label, th.link})
				if url != label {
					out = append(out, span{" (" + url + ")", th.dim})
				}
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError {
			text.WriteByte(s[i])
		} else {
			text.WriteRune(r)
		}
		i += max(size, 1)
	}
	flush()
	return out
}

func isASCIIPunct(c byte) bool {
	return c < 0x80 && unicode.IsPunct(rune(c)) || c == '`' || c == '*' || c == '_' || c == '[' || c == ']' || c == '#' || c == '|'
}

func runOf(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// closingEmphasis finds the closing delimiter of a single * or _ opened at
// i, following CommonMark's flanking rules closely enough that snake_case
// identifiers and arithmetic stay untouched.
func closingEmphasis(s string, i int) int {
	c := s[i]
	if i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == c {
		return -1
	}
	if i > 0 && (isWordByte(s[i-1]) || c == '*' && s[i-1] == '*') {
		return -1
	}
	for j := i + 2; j < len(s); j++ {
		if s[j] != c || s[j-1] == ' ' || s[j-1] == '\\' {
			continue
		}
		if j+1 < len(s) && (isWordByte(s[j+1]) || s[j+1] == c) {
			continue
		}
		return j
	}
	return -1
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// link parses [label](url) at the start of s.
func link(s string) (label, url string, n int, ok bool) {
	close := strings.Index(s, "](")
	if close < 1 || strings.ContainsAny(s[1:close], "[]") {
		return "", "", 0, false
	}
	end := strings.IndexByte(s[close+2:], ')')
	if end < 1 || strings.ContainsAny(s[close+2:close+2+end], " \t") {
		return "", "", 0, false
	}
	return s[1:close], s[close+2 : close+2+end], close + 2 + end + 1, true
}

// plainParas renders text without Markdown: one paragraph per line, word
// wrapped, every line prefixed alike.
func plainParas(src string, style tcell.Style, prefix, cont []span) []para {
	lines := splitLines(src)
	out := make([]para, 0, len(lines))
	for i, ln := range lines {
		p := para{cont: cont, spans: []span{{ln, style}}}
		if i == 0 {
			p.prefix = prefix
		} else {
			p.prefix = cont
		}
		out = append(out, p)
	}
	return out
}

// layoutParas wraps paragraphs to width, sanitizing every span.
func layoutParas(paras []para, width int, th *theme) []line {
	out := make([]line, 0, len(paras))
	for _, p := range paras {
		first := cellsOf(p.prefix, th.escape)
		if p.rule {
			rule := cellsOf([]span{{strings.Repeat("─", max(width-cellsWidth(first), 1)), th.dim}}, th.escape)
			out = append(out, lineOf(append(first, rule...)))
			continue
		}
		cont := cellsOf(p.cont, th.escape)
		for _, row := range wrapCells(cellsOf(p.spans, th.escape), width, first, cont, p.hard) {
			out = append(out, lineOf(row))
		}
	}
	return out
}
