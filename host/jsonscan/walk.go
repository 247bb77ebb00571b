package jsonscan

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Object walks the object starting at b[i] (which must be '{'), validating
// its structure and calling member for each key in order. key is the raw
// text between the quotes and flags describes it; v indexes the first byte
// of the value, always within b. member returns the index just past the
// value, having validated it (with Value or by parsing it); its false stops
// the walk. Object returns the index just past the closing brace.
func Object(b []byte, i int, member func(key []byte, flags StrFlags, v int) (int, bool)) (int, bool) {
	j := SkipSpace(b, i+1)
	if j < len(b) && b[j] == '}' {
		return j + 1, true
	}
	for {
		if j >= len(b) || b[j] != '"' {
			return j, false
		}
		end, flags, ok := String(b, j)
		if !ok {
			return end, false
		}
		key := b[j+1 : end-1]
		j = SkipSpace(b, end)
		if j >= len(b) || b[j] != ':' {
			return j, false
		}
		if j = SkipSpace(b, j+1); j >= len(b) {
			return j, false
		}
		if j, ok = member(key, flags, j); !ok {
			return j, false
		}
		var more bool
		if j, more, ok = next(b, j, '}'); !more {
			return j, ok
		}
	}
}

// Array walks the array starting at b[i] (which must be '['), calling
// element with the index of each element's first byte (always within b);
// element returns the index just past it, as Object's member does.
func Array(b []byte, i int, element func(v int) (int, bool)) (int, bool) {
	j := SkipSpace(b, i+1)
	if j < len(b) && b[j] == ']' {
		return j + 1, true
	}
	for {
		if j >= len(b) {
			return j, false
		}
		var ok, more bool
		if j, ok = element(j); !ok {
			return j, false
		}
		if j, more, ok = next(b, j, ']'); !more {
			return j, ok
		}
	}
}

// next reads what follows a member or element at b[j:]: a ',' (more is
// true and k indexes the next one), the closing byte (k is just past it) or
// anything else (ok is false).
func next(b []byte, j int, closing byte) (k int, more, ok bool) {
	j = SkipSpace(b, j)
	switch {
	case j >= len(b):
		return j, false, false
	case b[j] == ',':
		return SkipSpace(b, j+1), true, true
	case b[j] == closing:
		return j + 1, false, true
	}
	return j, false, false
}

// Unquote appends the decoded value of tok, a string token that String
// accepted (quotes included), to dst. Like encoding/json it turns each
// invalid UTF-8 byte and each unpaired surrogate escape into U+FFFD.
func Unquote(dst, tok []byte) []byte {
	s := tok[1 : len(tok)-1]
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i, dst = unescape(dst, s, i)
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] != '\\' && s[j] < utf8.RuneSelf {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
		}
	}
	return dst
}

// unescape decodes the escape at s[i] (a backslash String validated).
func unescape(dst, s []byte, i int) (int, []byte) {
	switch c := s[i+1]; c {
	case 'b':
		return i + 2, append(dst, '\b')
	case 'f':
		return i + 2, append(dst, '\f')
	case 'n':
		return i + 2, append(dst, '\n')
	case 'r':
		return i + 2, append(dst, '\r')
	case 't':
		return i + 2, append(dst, '\t')
	case 'u':
		r := hex4(s, i+2)
		i += 6
		if utf16.IsSurrogate(r) {
			// Only a following \u escape can complete the pair; anything
			// else leaves this half unpaired.
			if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
				if pair := utf16.DecodeRune(r, hex4(s, i+2)); pair != utf8.RuneError {
					return i + 6, utf8.AppendRune(dst, pair)
				}
			}
			r = utf8.RuneError
		}
		return i, utf8.AppendRune(dst, r)
	default: // '"', '\\', '/'
		return i + 2, append(dst, c)
	}
}
