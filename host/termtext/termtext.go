package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns the visible escape for a rune that must not reach a
// terminal, or "" for a rune that may be printed as it is. Controls below
// U+0100 (C0, DEL, C1) become \xNN; bidirectional embeddings, overrides,
// isolates and marks, the line and paragraph separators and the byte-order
// mark become \uNNNN. Newline and tab are controls too: callers that print
// several lines keep them with Text.
func Escape(r rune) string {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return fmt.Sprintf(`\x%02x`, r)
	case isFormat(r):
		return fmt.Sprintf(`\u%04x`, r)
	}
	return ""
}

// isFormat reports the invisible formatting runes that change how a
// terminal orders or breaks the text around them.
func isFormat(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, // LRE RLE PDF LRO RLO
		r >= 0x2066 && r <= 0x2069, // LRI RLI FSI PDI
		r == 0x200e, r == 0x200f,   // LRM RLM
		r == 0x061c,              // ALM
		r == 0x2028, r == 0x2029, // line and paragraph separators
		r == 0xfeff: // byte-order mark, zero-width no-break space
		return true
	}
	return false
}

// Unsafe reports whether r must not reach a terminal as it is: Escape
// escapes it, or it is the replacement for invalid UTF-8.
func Unsafe(r rune) bool { return r == utf8.RuneError || Escape(r) != "" }

// Line returns s safe to print on one line: every control, newline and tab
// included, is escaped.
func Line(s string) string { return sanitize(s, false) }

// Text returns s safe to print as several lines: newlines and tabs are kept
// (a CR LF pair becomes a newline), every other control is escaped.
func Text(s string) string { return sanitize(s, true) }

func sanitize(s string, multiline bool) string {
	if clean(s, multiline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case multiline && r == '\r' && strings.HasPrefix(s[size:], "\n"):
			// The newline that follows is written next.
		default:
			if e := Escape(r); e != "" {
				b.WriteString(e)
			} else {
				b.WriteString(s[:size])
			}
		}
		s = s[max(size, 1):]
	}
	return b.String()
}

// clean reports whether s can be printed unchanged.
func clean(s string, multiline bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if multiline && (c == '\n' || c == '\t') {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if c < 0x80 || Unsafe(r) && !(r == utf8.RuneError && size == 3) {
			return false
		}
		i += size
	}
	return true
}
