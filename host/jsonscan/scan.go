package jsonscan

import (
	"encoding/binary"
	"strconv"
)

// MaxDepth bounds the nesting Value accepts. encoding/json allows 10,000
// levels; real payloads nest a handful, so a lower bound costs nothing and
// keeps the recursion shallow.
const MaxDepth = 1000

// StrFlags describes a validated string token.
type StrFlags uint8

const (
	// Escaped: the token contains a backslash escape.
	Escaped StrFlags = 1 << iota
	// NonASCII: the token contains a byte >= 0x80 (possibly invalid UTF-8).
	NonASCII
)

// Plain reports whether the token's bytes between the quotes are its
// decoded value: no escapes, ASCII only.
func (f StrFlags) Plain() bool { return f == 0 }

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Valid reports whether b is one JSON value with optional surrounding
// whitespace.
func Valid(b []byte) bool {
	end, ok := Value(b, SkipSpace(b, 0))
	return ok && SkipSpace(b, end) == len(b)
}

// Value validates the JSON value starting at b[i] (no leading whitespace)
// and returns the index just past it.
func Value(b []byte, i int) (end int, ok bool) { return value(b, i, 0) }

func value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; c {
	case '"':
		end, _, ok := String(b, i)
		return end, ok
	case '{':
		return object(b, i, depth+1)
	case '[':
		return array(b, i, depth+1)
	case 't':
		return Literal(b, i, "true")
	case 'f':
		return Literal(b, i, "false")
	case 'n':
		return Literal(b, i, "null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return Number(b, i)
		}
		return i, false
	}
}

// Literal reads the bare word lit (true, false or null) at b[i] and returns
// the index after it.
func Literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

func object(b []byte, i, depth int) (int, bool) {
	if depth > MaxDepth {
		return i, false
	}
	return Object(b, i, func(_ []byte, _ StrFlags, v int) (int, bool) { return value(b, v, depth) })
}

func array(b []byte, i, depth int) (int, bool) {
	if depth > MaxDepth {
		return i, false
	}
	return Array(b, i, func(v int) (int, bool) { return value(b, v, depth) })
}

// Number validates the number starting at b[i] and returns the index just
// past it (JSON's grammar: no leading zeros, no leading plus, a digit on
// both sides of the point).
func Number(b []byte, i int) (int, bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j >= len(b):
		return j, false
	case b[j] == '0':
		j++
	case b[j] >= '1' && b[j] <= '9':
		j = digits(b, j+1)
	default:
		return j, false
	}
	if j < len(b) && b[j] == '.' {
		k := digits(b, j+1)
		if k == j+1 {
			return k, false
		}
		j = k
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := digits(b, j)
		if k == j {
			return k, false
		}
		j = k
	}
	return j, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// Int parses a whole number token as encoding/json does into an int64:
// digits with an optional minus sign, no fraction or exponent, in range.
func Int(tok []byte) (int64, bool) {
	if len(tok) == 0 {
		return 0, false
	}
	// The digits-only check keeps ParseInt's own leniency ("+1", "0x1",
	// "1_0") out; JSON grammar (no leading zeros) is the validator's job.
	for i, c := range tok {
		if (c < '0' || c > '9') && (i > 0 || c != '-') {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	return n, err == nil
}

const (
	lsb   = 0x0101010101010101
	msb   = 0x8080808080808080
	quote = '"' * lsb
	slash = '\\' * lsb
	ctrl  = 0x20 * lsb
)

// special reports whether any byte of the little-endian word x is a quote,
// a backslash or a control character. Each test is exact for "some byte
// is", which is all the caller needs: it then looks byte by byte.
func special(x uint64) bool {
	q, s := x^quote, x^slash
	return ((q-lsb)&^q|(s-lsb)&^s|(x-ctrl)&^x)&msb != 0
}

// String validates the string token starting at b[i] (which must be a
// quote) and returns the index just past its closing quote.
func String(b []byte, i int) (end int, f StrFlags, ok bool) {
	j := i + 1
	var hi uint64
	for {
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			if special(x) {
				break
			}
			hi |= x
			j += 8
		}
		for j < len(b) {
			c := b[j]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			hi |= uint64(c)
			j++
		}
		if j >= len(b) || b[j] < 0x20 {
			return j, f, false
		}
		if b[j] == '"' {
			if hi&msb != 0 {
				f |= NonASCII
			}
			return j + 1, f, true
		}
		f |= Escaped
		if j+1 >= len(b) {
			return j, f, false
		}
		switch b[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if hex4(b, j+2) < 0 {
				return j, f, false
			}
			j += 6
		default:
			return j, f, false
		}
	}
}

// hex4 returns the value of the four hex digits at b[i:], or -1.
func hex4(b []byte, i int) rune {
	if len(b)-i < 4 {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
