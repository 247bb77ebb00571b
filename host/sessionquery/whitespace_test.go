package sessionquery

import (
	"slices"
	"testing"
)

func TestIsJSSpaceMatchesTheECMAScriptWhitespaceSet(t *testing.T) {
	js := []rune{'\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF}
	for r := rune(0x2000); r <= 0x200A; r++ {
		js = append(js, r)
	}
	for r := rune(0); r <= 0x10FFFF; r++ {
		if got, want := IsJSSpace(r), slices.Contains(js, r); got != want {
			t.Fatalf("IsJSSpace(%U) = %v, want %v", r, got, want)
		}
	}
}

func TestWhitespaceHelpersUseTheJavaScriptClass(t *testing.T) {
	if got := TrimJS("\uFEFF\u00A0 x \u3000"); got != "x" {
		t.Fatalf("TrimJS = %q", got)
	}
	if got := TrimJS("\u0085x\u0085"); got != "\u0085x\u0085" {
		t.Fatalf("TrimJS trimmed U+0085: %q", got)
	}
	if got := FieldsJS(" a\u2003b\u0085c\n\td "); !slices.Equal(got, []string{"a", "b\u0085c", "d"}) {
		t.Fatalf("FieldsJS = %q", got)
	}
	if got := CollapseJS("\u205F alpha \n\u200A beta\uFEFF"); got != "alpha beta" {
		t.Fatalf("CollapseJS = %q", got)
	}
}
