package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds strings that make a terminal do something other than print
// them, with what the reader sees instead.
var hostile = []struct {
	name, in, line, text string
}{
	{"SGR colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
	{"OSC 8 link", "\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil/\x1b\click\x1b]8;;\x1b\`, `\x1b]8;;http://evil/\x1b\click\x1b]8;;\x1b\`},
	{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\x07`, `\x1b]52;c;cm0gLXJmIH4=\x07`},
	{"C1 CSI", "a\u009b2Jb", `a\x9b2Jb`, `a\x9b2Jb`},
	{"C1 OSC", "\u009d0;title\u009c", `\x9d0;title\x9c`, `\x9d0;title\x9c`},
	{"carriage return overwrite", "safe\rrm -rf", `safe\x0drm -rf`, `safe\x0drm -rf`},
	{"backspace", "ok\b\bno", `ok\x08\x08no`, `ok\x08\x08no`},
	{"DEL and NUL", "a\x7fb\x00c", `a\x7fb\x00c`, `a\x7fb\x00c`},
	{"RLO Trojan Source", "access\u202e } \u2066if admin\u2069", `access\u202e } \u2066if admin\u2069`, `access\u202e } \u2066if admin\u2069`},
	{"embeddings and marks", "\u202a\u202b\u202c\u202d\u200e\u200f\u061c", `\u202a\u202b\u202c\u202d\u200e\u200f\u061c`, `\u202a\u202b\u202c\u202d\u200e\u200f\u061c`},
	{"isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`, `\u2066\u2067\u2068\u2069`},
	{"separators and BOM", "a\u2028b\u2029c\ufeff", `a\u2028b\u2029c\ufeff`, `a\u2028b\u2029c\ufeff`},
	{"invalid UTF-8", "a\xffb\xc3", "a\uFFFDb\uFFFD", "a\uFFFDb\uFFFD"},
	{"newlines and tabs", "one\ttwo\r\nthree\n", `one\x09two\x0d\x0athree\x0a`, "one\ttwo\nthree\n"},
}

func TestHostileTextIsMadeVisible(t *testing.T) {
	for _, c := range hostile {
		t.Run(c.name, func(t *testing.T) {
			if got := Line(c.in); got != c.line {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
			}
			if got := Text(c.in); got != c.text {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
			}
			for _, out := range []string{Line(c.in), Text(c.in)} {
				assertInert(t, out)
			}
		})
	}
}

// assertInert fails when out holds anything a terminal would interpret.
func assertInert(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output %q is not valid UTF-8", out)
	}
	for _, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if Escape(r) != "" {
			t.Fatalf("output %q still holds %U", out, r)
		}
	}
}

func TestOrdinaryTextIsUnchanged(t *testing.T) {
	for _, s := range []string{"", "plain ascii", "héllo wörld", "日本語", "emoji 👩‍👩‍👧 and e\u0301", "literal \uFFFD stays", "مرحبا"} {
		if Line(s) != s || Text(s) != s {
			t.Errorf("%q changed: Line %q Text %q", s, Line(s), Text(s))
		}
	}
}

func TestEscapeCoversEveryControlRange(t *testing.T) {
	for r := rune(0); r < 0x20; r++ {
		if Escape(r) == "" {
			t.Errorf("C0 %U not escaped", r)
		}
	}
	for r := rune(0x80); r < 0xa0; r++ {
		if Escape(r) == "" {
			t.Errorf("C1 %U not escaped", r)
		}
	}
	for _, r := range []rune{' ', 'a', 0xa0, 0x200b, 0x2027, 0x202f, 0x2065, 0x206a} {
		if Escape(r) != "" {
			t.Errorf("%U escaped, but it is printable", r)
		}
	}
}

func FuzzTextIsInert(f *testing.F) {
	for _, c := range hostile {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		assertInert(t, Text(s))
		line := Line(s)
		assertInert(t, line)
		if strings.ContainsAny(line, "\n\t") {
			t.Fatalf("Line(%q) = %q keeps a newline or tab", s, line)
		}
	})
}
