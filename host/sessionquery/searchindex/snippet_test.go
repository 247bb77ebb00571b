package searchindex

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// mark renders the spec's [x] notation with the real highlight markers.
func mark(s string) string {
	return strings.NewReplacer("[", string(markStart), "]", string(markEnd)).Replace(s)
}

func TestMakeSnippetMatchesThePinnedExamples(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"  short\ntext  ", 20, "short text"},
		{"abcde[f]", 1, "…"},
		{"abcdefghij", 5, "abcd…"},
		{"ab[c]defghij", 5, "…bcd…"},
		{"ab[c]defghij", 3, "…c…"},
		{"abcde[f]", 2, "…f"},
		{"abcde[f]", 5, "…cdef"},
		{"  x—[café]\n y  ", 20, "x—café y"},
		{"", 5, ""},
		{"[a]", 1, "a"},
		{"x\u3000\u00a0\ufeff y", 10, "x y"},
	}
	for _, tt := range tests {
		if got := makeSnippet(mark(tt.in), tt.max); got != tt.want {
			t.Errorf("makeSnippet(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestMakeSnippetStaysWithinTheLimitAroundTheMatch(t *testing.T) {
	doc := strings.Repeat("lorem ipsum ", 200) + "[needle]" + strings.Repeat(" dolor\tsit\n", 200)
	for _, max := range []int{1, 2, 3, 7, 40, 240} {
		got := makeSnippet(mark(doc), max)
		if n := utf8.RuneCountInString(got); n > max {
			t.Errorf("max %d: snippet has %d code points: %q", max, n, got)
		}
		if strings.ContainsAny(got, "\n\t") {
			t.Errorf("max %d: snippet keeps raw whitespace: %q", max, got)
		}
		if max >= 40 && !strings.Contains(got, "needle") {
			t.Errorf("max %d: snippet %q misses the match", max, got)
		}
	}
}

func TestSanitizeTextReplacesNULAndMarkers(t *testing.T) {
	got, n := sanitizeText("a\x00b\uFDD0c\uFDD1é")
	if got != "a\uFFFDb\uFFFDc\uFFFDé" || n != 7 {
		t.Errorf("sanitizeText = %q, %d", got, n)
	}
	if got, n := sanitizeText("plain"); got != "plain" || n != 5 {
		t.Errorf("sanitizeText(plain) = %q, %d", got, n)
	}
}
