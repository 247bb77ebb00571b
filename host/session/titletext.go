package session

import (
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Title limits (host.md §1.4: the fallback keeps 5 words within 40 bytes;
// any accepted title fits in 80 bytes).
const (
	FallbackTitleWords = 5
	FallbackTitleBytes = 40
	MaxTitleBytes      = 80
)

// FallbackTitle derives the deterministic title of a session from its first
// prompt: terminal escapes and invisible controls removed, whitespace
// collapsed, the first FallbackTitleWords words, cut to FallbackTitleBytes.
// It returns "" when the prompt has no words.
func FallbackTitle(prompt string) string {
	clean := cleanTitleText(prompt)
	if clean == "" {
		return ""
	}
	words := strings.SplitN(clean, " ", FallbackTitleWords+1)
	if len(words) > FallbackTitleWords {
		words = words[:FallbackTitleWords]
	}
	return cutTitle(strings.Join(words, " "), FallbackTitleBytes)
}

// FallbackTitleFor is FallbackTitle over the text blocks of a prompt
// message, joined by newlines so that adjacent blocks stay separate words.
func FallbackTitleFor(m Message) string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == BlockText {
			parts = append(parts, b.Text)
		}
	}
	return FallbackTitle(strings.Join(parts, "\n"))
}

// NormalizeTitle cleans a title supplied by a user or a provider the same
// way and cuts it to maxBytes (MaxTitleBytes when maxBytes <= 0). An empty
// result means the input had nothing visible and must be refused.
func NormalizeTitle(title string, maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = MaxTitleBytes
	}
	return cutTitle(cleanTitleText(title), maxBytes)
}

// cutTitle shortens s (already cleaned: single spaces, trimmed) to at most
// max bytes without splitting a grapheme cluster, so an emoji sequence or a
// letter with its combining marks is kept whole or dropped whole. When the
// cut lands inside a word it backs off to the previous space, unless that
// would discard more than half of the budget (a long word or unspaced
// script such as CJK is better cut mid-word than reduced to a stub).
func cutTitle(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut, rest, state := 0, s, -1
	for len(rest) > 0 {
		cluster, next, _, st := uniseg.FirstGraphemeClusterInString(rest, state)
		if cut+len(cluster) > max {
			break
		}
		cut += len(cluster)
		rest, state = next, st
	}
	if cut == 0 {
		// A single cluster longer than the budget (runaway combining marks):
		// fall back to the longest whole-rune prefix.
		for cut < len(s) {
			_, size := utf8.DecodeRuneInString(s[cut:])
			if cut+size > max {
				break
			}
			cut += size
		}
	}
	if cut < len(s) && s[cut] != ' ' {
		if sp := strings.LastIndexByte(s[:cut], ' '); sp >= max/2 {
			cut = sp
		}
	}
	return strings.TrimRight(s[:cut], " ")
}

// cleanTitleText removes terminal escape sequences, control characters and
// invisible or direction-changing format characters (a title is printed in
// terminals and editor lists, where they could hide or reorder text), drops
// invalid UTF-8, collapses whitespace runs to one space and trims.
func cleanTitleText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pendingSpace := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			i++
			continue
		case r == 0x1b || r == 0x9b || r == 0x9d:
			i = skipEscape(s, i)
			continue
		case isTitleSpace(r):
			pendingSpace = b.Len() > 0
			i += size
			continue
		case isTitleControl(r):
			i += size
			continue
		}
		if pendingSpace {
			b.WriteByte(' ')
			pendingSpace = false
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// skipEscape returns the index just past the escape sequence starting at i:
// OSC (ESC ] or U+009D, up to BEL, ESC \ or the end), CSI (ESC [ or U+009B,
// parameters, intermediates, one final byte), or a two-byte ESC sequence. An
// introducer that does not complete a sequence is dropped on its own.
func skipEscape(s string, i int) int {
	r, size := utf8.DecodeRuneInString(s[i:])
	j := i + size
	osc, csi := r == 0x9d, r == 0x9b
	if r == 0x1b {
		if j >= len(s) {
			return j
		}
		switch c := s[j]; {
		case c == ']':
			osc, j = true, j+1
		case c == '[':
			csi, j = true, j+1
		case c >= '@' && c <= '_':
			return j + 1
		default:
			return j
		}
	}
	switch {
	case osc:
		for j < len(s) {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
			j++
		}
		return j
	case csi:
		k := j
		for k < len(s) && s[k] >= 0x30 && s[k] <= 0x3f {
			k++
		}
		for k < len(s) && s[k] >= 0x20 && s[k] <= 0x2f {
			k++
		}
		if k < len(s) && s[k] >= 0x40 && s[k] <= 0x7e {
			return k + 1
		}
		return j
	}
	return j
}

// isTitleSpace is the JavaScript \s class (ECMAScript WhiteSpace and
// LineTerminator), which the title rules were written against; unlike
// unicode.IsSpace it excludes U+0085 (removed as a control instead).
func isTitleSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// isTitleControl reports C0/C1 controls and invisible or bidirectional
// format characters.
func isTitleControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x200b, r == 0x200e, r == 0x200f, r == 0xfeff:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x206f:
		return true
	}
	return false
}
