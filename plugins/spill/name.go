package spill

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SafeName encodes a suggested file name as one path segment, injectively:
// bytes in [A-Za-z0-9._-] are kept, every other UTF-16 code unit becomes
// ~XXXX (upper-case hex), "~" included; the whole segments "." and ".." are
// escaped, and the empty name becomes "~". Bytes that are not valid UTF-8
// become the lone low surrogates ~DC80..~DCFF, which no valid text encodes
// to, so distinct inputs never share a name.
func SafeName(name string) string {
	switch name {
	case "":
		return "~"
	case ".":
		return "~002E"
	case "..":
		return "~002E~002E"
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "~%04X", 0xDC00|uint16(name[i]))
		case r < utf8.RuneSelf && keep(byte(r)):
			b.WriteByte(byte(r))
		case r >= 0x10000:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "~%04X~%04X", hi, lo)
		default:
			fmt.Fprintf(&b, "~%04X", r)
		}
		i += size
	}
	return b.String()
}

func keep(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}
