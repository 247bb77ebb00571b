package sessionquery

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// TextMatcher is a compiled literal text filter: the caller's text, trimmed
// and split on runs of JavaScript whitespace, must occur in a document with
// one-or-more JavaScript whitespace between consecutive parts, ignoring case
// by Unicode simple folding, anywhere in the document.
//
// It matches exactly what the case-insensitive regular expression of the
// quoted parts joined by JSSpacePattern would (a fuzz test holds the two
// together), but searches case-folded text with strings.Index instead of
// simulating an automaton, so a long query over a long log stays fast.
//
// The filter stays the design's literal one (session-query.md §2.4) and
// does not take up full-text search's identifier parts (host/searchtext):
// it is a substring match, so "SessionHeader" and "header" already match
// "parseSessionHeader", while "session header" needs whitespace between
// the two words and matches neither "parseSessionHeader" nor
// "session_header". A literal filter that matched text not containing it
// could not be used to check for exactly that text; finding what people
// type is the search engine's job.
type TextMatcher struct {
	parts []string // case-folded, non-empty, free of whitespace
}

// CompileTextFilter compiles caller text into a TextMatcher. Blank text
// fails with INVALID_FILTER.
func CompileTextFilter(text string) (*TextMatcher, error) {
	parts := FieldsJS(text)
	if len(parts) == 0 {
		return nil, blankText()
	}
	for i, p := range parts {
		parts[i] = foldCase(p)
	}
	return &TextMatcher{parts: parts}, nil
}

// Match reports whether doc contains the filter's text.
func (m *TextMatcher) Match(doc string) bool {
	folded := foldCase(doc)
	first := m.parts[0]
	for off := 0; off <= len(folded)-len(first); {
		i := strings.Index(folded[off:], first)
		if i < 0 {
			return false
		}
		start := off + i
		if m.restAt(folded, start+len(first)) {
			return true
		}
		off = start + 1
	}
	return false
}

// restAt reports whether parts[1:] follow at pos, each after at least one
// whitespace rune. Parts never contain or start with whitespace, so the
// whole run between two parts is consumed: there is no other way to match.
func (m *TextMatcher) restAt(s string, pos int) bool {
	for _, p := range m.parts[1:] {
		j := pos
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !IsJSSpace(r) {
				break
			}
			j += size
		}
		if j == pos || !strings.HasPrefix(s[j:], p) {
			return false
		}
		pos = j + len(p)
	}
	return true
}

// foldCase maps every rune to the smallest member of its simple case-folding
// orbit, so two strings are equal after folding exactly when a
// case-insensitive match would equate them rune by rune. Each invalid UTF-8
// byte becomes one U+FFFD, as a regexp decodes it.
func foldCase(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return foldASCII(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldASCII upper-cases ASCII letters: 'A' < 'a' and 'K' < U+212A, 'S' <
// U+017F, so the upper-case letter is its orbit's smallest member.
func foldASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'a' && c <= 'z' {
					b[j] = c - 'a' + 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}
