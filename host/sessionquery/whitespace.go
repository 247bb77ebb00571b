package sessionquery

import "strings"

// jsSpaceClass is the body of a regexp character class matching exactly the
// runes IsJSSpace accepts. Go's \s is ASCII-only and unicode.IsSpace differs
// from JavaScript on U+0085 and U+FEFF, so the class is spelled out.
const jsSpaceClass = `\t\n\v\f\r \x{00A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}`

// JSSpacePattern is a regexp fragment matching one run of JavaScript
// whitespace (the `\s+` of a `u`-flag JavaScript regular expression).
const JSSpacePattern = `[` + jsSpaceClass + `]+`

// IsJSSpace reports whether r is whitespace for JavaScript's `\s` and
// String.prototype.trim: the WhiteSpace and LineTerminator productions of
// ECMAScript. Unlike unicode.IsSpace it includes U+FEFF and excludes U+0085.
func IsJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ',
		'\u00A0', '\u1680', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000', '\uFEFF':
		return true
	}
	return r >= '\u2000' && r <= '\u200A'
}

// TrimJS removes leading and trailing JavaScript whitespace, like
// String.prototype.trim.
func TrimJS(s string) string { return strings.TrimFunc(s, IsJSSpace) }

// FieldsJS splits s around runs of JavaScript whitespace, dropping empty
// fields (`s.trim().split(/\s+/u)` for a non-blank s).
func FieldsJS(s string) []string { return strings.FieldsFunc(s, IsJSSpace) }

// CollapseJS trims s and replaces every inner run of JavaScript whitespace
// with one ASCII space.
func CollapseJS(s string) string { return strings.Join(FieldsJS(s), " ") }
