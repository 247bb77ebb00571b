package tui

import (
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	tests := []struct {
		name string
		new  string
		want string
	}{
		{"identical", old, ""},
		{"one line changed", strings.Replace(old, "e\n", "E\n", 1),
			"@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"},
		{"insert at the start", "z\n" + old, "@@ -1,3 +1,4 @@\n+z\n a\n b\n c\n"},
		{"two distant changes make two hunks", strings.Replace(strings.Replace(old, "a\n", "A\n", 1), "j\n", "J\n", 1),
			"@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n@@ -7,4 +7,4 @@\n g\n h\n i\n-j\n+J\n"},
		{"new file", "", "@@ -1,10 +0,0 @@\n-a\n-b\n-c\n-d\n-e\n-f\n-g\n-h\n-i\n-j\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := diffText(unifiedDiff(old, tt.new, 3)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestSnippetDiffKeepsCommonLines(t *testing.T) {
	got := diffText(snippetDiff("x := 1\nreturn x", "x := 2\nreturn x"))
	if got != "-x := 1\n+x := 2\n return x\n" {
		t.Errorf("got\n%s", got)
	}
}

func TestHugeDiffsFallBackToAReplacement(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 3000; i++ {
		a.WriteString("a line\n")
		b.WriteString("b line\n")
	}
	d := lineDiff(splitLines(a.String()), splitLines(b.String()))
	if len(d) != 6000 || d[0].op != '-' || d[5999].op != '+' {
		t.Errorf("fallback diff has %d lines", len(d))
	}
}
