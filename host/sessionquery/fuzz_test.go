package sessionquery

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceRegexp is the text filter exactly as the session-query
// reference spells it: trimmed, split on JavaScript whitespace, each part
// quoted, joined by one-or-more JavaScript whitespace, case-insensitive.
// TextMatcher must agree with it on every input.
func referenceRegexp(t *testing.T, text string) *regexp.Regexp {
	t.Helper()
	// Stray bytes become one U+FFFD each, the way the matcher decodes them.
	var b strings.Builder
	for _, r := range text {
		b.WriteRune(r)
	}
	parts := FieldsJS(b.String())
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`(?i)` + strings.Join(parts, JSSpacePattern))
}

// FuzzTextFilter pins the literal scan for arbitrary text and documents:
// blank text is the only rejection, the matcher agrees with the reference
// regular expression, finds the text inside any document containing it
// (even with its whitespace runs rewritten to other JavaScript whitespace),
// keeps metacharacters literal, and ignores ASCII case.
func FuzzTextFilter(f *testing.F) {
	seeds := [][2]string{
		{"hello   (ai)+", "Hello\n(AI)+"}, {"CAFÉ", "café"}, {"alpha beta", "Alpha\n beta"},
		{" ", "x"}, {"\uFEFF", "\uFEFF"}, {"\u0085", "a\u0085b"}, {"a.b*c?", "axbyc"},
		{`\d+`, "12"}, {"[x]|{y}", "[X]|{Y}"}, {"\xff\xfe", "a\xff\xfeb"}, {"ǅ ß K", "ǆ\u3000ẞ\tk"},
		{"aa a", "aaa aa a"}, {"ſ", "S"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, doc string) {
		m, err := CompileTextFilter(text)
		fields := FieldsJS(text)
		if len(fields) == 0 {
			wantError(t, err, CodeInvalidFilter, "session text filter must contain non-whitespace text")
			return
		}
		if err != nil {
			t.Fatalf("CompileTextFilter(%q): %v", text, err)
		}
		ref := referenceRegexp(t, text)
		for _, d := range []string{doc, text, doc + text + doc, strings.ToUpper(doc)} {
			if got, want := m.Match(d), ref.MatchString(d); got != want {
				t.Fatalf("text %q on %q: matcher %v, reference %v", text, d, got, want)
			}
		}
		if !m.Match("<" + text + ">") {
			t.Fatalf("%q does not match its own text", text)
		}
		if respaced := "<" + strings.Join(fields, "\u3000\n\uFEFF") + ">"; !m.Match(respaced) {
			t.Fatalf("%q does not match %q", text, respaced)
		}
		if joined := strings.Join(fields, ""); len(fields) > 1 && m.Match(joined) {
			t.Fatalf("%q matches whitespace-free %q", text, joined)
		}
		if isASCII(text) {
			for _, variant := range []string{strings.ToUpper(text), strings.ToLower(text)} {
				if !m.Match(variant) {
					t.Fatalf("%q does not match case variant %q", text, variant)
				}
			}
		}
		if m.Match("") {
			t.Fatalf("%q matches the empty document", text)
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
