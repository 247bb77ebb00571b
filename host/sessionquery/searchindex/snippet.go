package searchindex

import "github.com/seed-e9b4dba4/dsh/host/sessionquery"

// Highlight markers: noncharacters, which document text never contains
// because it is sanitized before it is stored.
const (
	markStart = '\uFDD0'
	markEnd   = '\uFDD1'
)

const ellipsis = '…'

// sanitizeText replaces NUL and the two marker noncharacters with U+FFFD so
// that stored text can never forge a highlight, and counts code points.
func sanitizeText(s string) (string, int) {
	clean := true
	n := 0
	for _, r := range s {
		n++
		if r == 0 || r == markStart || r == markEnd {
			clean = false
		}
	}
	if clean {
		return s, n
	}
	out := make([]rune, 0, n)
	for _, r := range s {
		if r == 0 || r == markStart || r == markEnd {
			r = '\uFFFD'
		}
		out = append(out, r)
	}
	return string(out), n
}

// makeSnippet turns a highlighted document into plain text of at most
// maxChars code points around the first highlighted span, with whitespace
// runs collapsed to one space (session-query.md §3.12).
func makeSnippet(marked string, maxChars int) string {
	text := make([]rune, 0, len(marked))
	matchStart := -1
	for _, r := range marked {
		switch {
		case r == markStart:
			if matchStart < 0 {
				matchStart = len(text)
			}
		case r == markEnd:
		case sessionquery.IsJSSpace(r):
			if len(text) > 0 && text[len(text)-1] != ' ' {
				text = append(text, ' ')
			}
		default:
			text = append(text, r)
		}
	}
	if len(text) > 0 && text[len(text)-1] == ' ' {
		text = text[:len(text)-1]
	}
	if matchStart < 0 {
		matchStart = 0
	}
	n := len(text)
	if n <= maxChars {
		return string(text)
	}
	if maxChars == 1 {
		return string(ellipsis)
	}
	m := min(matchStart, n-1)
	start := max(0, m-maxChars/3)
	prefix, suffix := 0, 1
	if start > 0 {
		prefix = 1
	}
	content := maxChars - prefix - suffix
	if content < 1 {
		start = m
		suffix = 0
		content = maxChars - prefix
	} else if m >= start+content {
		start = m - content + 1
	}
	end := min(n, start+content)
	if end == n {
		suffix = 0
		content = maxChars - prefix
		start = max(0, end-content)
	}
	end = min(n, start+content)
	out := make([]rune, 0, maxChars)
	if prefix == 1 {
		out = append(out, ellipsis)
	}
	out = append(out, text[start:end]...)
	if suffix == 1 {
		out = append(out, ellipsis)
	}
	return string(out)
}
