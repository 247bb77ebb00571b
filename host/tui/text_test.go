package tui

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// plainRows lays spans out at width and returns the rows as text.
func plainRows(spans []span, width int, hard bool) []string {
	th := newTheme(false)
	var out []string
	for _, r := range wrapCells(cellsOf(spans, th.escape), width, nil, nil, hard) {
		var b strings.Builder
		for _, c := range r {
			b.WriteString(c.g)
		}
		out = append(out, b.String())
	}
	return out
}

func TestControlCharactersAreEscapedVisibly(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"plain text", "plain text"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"bell\x07 nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`},
		{"c1 \u009b csi", `c1 \x9b csi`},
		{"bidi \u202eevil\u202c", `bidi \u202eevil\u202c`},
		{"tab\tstop", "tab    stop"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"lone\rreturn", `lone\x0dreturn`},
		{"combining e\u0301 kept", "combining e\u0301 kept"},
		{"wide 日本", "wide 日本"},
		{"[red]tview tag[-]", "[red]tview tag[-]"},
	}
	for _, tt := range tests {
		if got := sanitize(tt.in); got != tt.want {
			t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEscapedCellsUseTheEscapeStyle(t *testing.T) {
	th := newTheme(true)
	cells := appendCells(nil, "a\x1bb", th.base, th.escape)
	var got []string
	for _, c := range cells {
		if c.style == th.escape {
			got = append(got, c.g)
		}
	}
	if strings.Join(got, "") != `\x1b` {
		t.Errorf("escape-styled cells = %q", got)
	}
}

func TestWordWrap(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		width int
		hard  bool
		want  []string
	}{
		{"fits", "hello world", 20, false, []string{"hello world"}},
		{"breaks at spaces", "the quick brown fox jumps", 10, false, []string{"the quick", "brown fox", "jumps"}},
		{"long word is cut", "abcdefghijkl", 5, false, []string{"abcde", "fghij", "kl"}},
		{"hard wrap ignores spaces", "ab cd ef", 4, true, []string{"ab c", "d ef"}},
		{"wide runes never split", "日本語テキスト", 5, false, []string{"日本", "語テ", "キス", "ト"}},
		{"escapes wrap like text", "\x1b\x1b\x1b", 6, false, []string{`\x1b\x`, `1b\x1b`}},
		{"width one", "ab", 1, false, []string{"a", "b"}},
		{"empty", "", 10, false, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plainRows([]span{{tt.text, tcell.StyleDefault}}, tt.width, tt.hard)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestContinuationRowsGetTheirPrefix(t *testing.T) {
	th := newTheme(false)
	rows := wrapCells(cellsOf([]span{{"one two three four", th.base}}, th.escape), 9,
		cellsOf([]span{{"• ", th.base}}, th.escape), cellsOf([]span{{"  ", th.base}}, th.escape), false)
	var got []string
	for _, r := range rows {
		var b strings.Builder
		for _, c := range r {
			b.WriteString(c.g)
		}
		got = append(got, b.String())
	}
	want := []string{"• one two", "  three", "  four"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestClipCellsEndsInAnEllipsis(t *testing.T) {
	th := newTheme(false)
	got := clipCells(cellsOf([]span{{"abcdefgh", th.base}}, th.escape), 5, th.dim)
	var b strings.Builder
	for _, c := range got {
		b.WriteString(c.g)
	}
	if b.String() != "abcd…" {
		t.Errorf("clip = %q", b.String())
	}
}

func TestFormatting(t *testing.T) {
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1.0k", 12345: "12.3k", 123456: "123k", 1_500_000: "1.5M"} {
		if got := tokens(in); got != want {
			t.Errorf("tokens(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{10: "10 B", 2048: "2 KB", 3 << 20: "3.0 MB"} {
		if got := byteSize(in); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", in, got, want)
		}
	}
}
