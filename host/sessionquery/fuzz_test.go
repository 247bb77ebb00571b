package sessionquery

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTextFilter pins the literal scan's invariants for arbitrary text:
// blank text is the only rejection, the matcher finds the text inside any
// document that contains it (even with its whitespace runs rewritten to
// other JavaScript whitespace), metacharacters stay literal, and ASCII case
// never matters.
func FuzzTextFilter(f *testing.F) {
	for _, seed := range []string{
		"hello   (ai)+", "CAFÉ", "alpha beta", " ", "\uFEFF", "\u0085", "a.b*c?", `\d+`, "[x]|{y}", "\xff\xfe", "ǅ ß K",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		re, err := CompileTextFilter(text)
		fields := FieldsJS(text)
		if len(fields) == 0 {
			wantError(t, err, CodeInvalidFilter, "session text filter must contain non-whitespace text")
			return
		}
		if err != nil {
			t.Fatalf("CompileTextFilter(%q): %v", text, err)
		}
		if !re.MatchString("<" + text + ">") {
			t.Fatalf("%q does not match its own text %q", re, text)
		}
		respaced := "<" + strings.Join(fields, "\u3000\n\uFEFF") + ">"
		if !re.MatchString(respaced) {
			t.Fatalf("%q does not match %q", re, respaced)
		}
		if joined := strings.Join(fields, ""); len(fields) > 1 && !strings.ContainsFunc(joined, IsJSSpace) {
			// Parts separated by whitespace must not match when glued
			// together, unless the glued text happens to contain the
			// phrase on its own (impossible without any whitespace).
			if re.MatchString(joined) {
				t.Fatalf("%q matches whitespace-free %q", re, joined)
			}
		}
		if isASCII(text) {
			for _, variant := range []string{strings.ToUpper(text), strings.ToLower(text)} {
				if !re.MatchString(variant) {
					t.Fatalf("%q does not match case variant %q", re, variant)
				}
			}
		}
		if re.MatchString("") {
			t.Fatalf("%q matches the empty document", re)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
