package spill

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestSafeNameEncoding(t *testing.T) {
	cases := []struct{ in, want string }{
		{"bash.txt", "bash.txt"},
		{"session_event_read.txt", "session_event_read.txt"},
		{"A-Z_0.9", "A-Z_0.9"},
		{"", "~"},
		{".", "~002E"},
		{"..", "~002E~002E"},
		{"...", "..."},
		{"~", "~007E"},
		{"~007E", "~007E007E"},
		{"../etc/passwd", "..~002Fetc~002Fpasswd"},
		{"/abs", "~002Fabs"},
		{"a\x00b", "a~0000b"},
		{"a b", "a~0020b"},
		{"a\\b", "a~005Cb"},
		{"é.txt", "~00E9.txt"},
		{"日本", "~65E5~672C"},
		{"😀", "~D83D~DE00"},
		{"\xff", "~DCFF"},
		{"a\x80", "a~DC80"},
	}
	for _, tc := range cases {
		if got := SafeName(tc.in); got != tc.want {
			t.Errorf("SafeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// decodeSafeName inverts SafeName; that it exists and round-trips every
// input is what makes the encoding injective.
func decodeSafeName(t *testing.T, s string) string {
	t.Helper()
	if s == "~" {
		return ""
	}
	var out strings.Builder
	var units []uint16
	flush := func() {
		for i := 0; i < len(units); i++ {
			u := units[i]
			switch {
			case utf16.IsSurrogate(rune(u)) && u < 0xDC00 && i+1 < len(units):
				out.WriteRune(utf16.DecodeRune(rune(u), rune(units[i+1])))
				i++
			case u >= 0xDC80 && u <= 0xDCFF:
				out.WriteByte(byte(u))
			default:
				out.WriteRune(rune(u))
			}
		}
		units = units[:0]
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '~' {
			flush()
			if !keep(s[i]) {
				t.Fatalf("encoded name %q contains the unescaped byte %q", s, s[i])
			}
			out.WriteByte(s[i])
			continue
		}
		if i+5 > len(s) {
			t.Fatalf("truncated escape in %q", s)
		}
		u, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
		if err != nil || strings.ToUpper(s[i+1:i+5]) != s[i+1:i+5] {
			t.Fatalf("bad escape %q in %q", s[i:i+5], s)
		}
		units = append(units, uint16(u))
		i += 4
	}
	flush()
	return out.String()
}

func checkSafeName(t *testing.T, in string) {
	t.Helper()
	enc := SafeName(in)
	if enc == "" || enc == "." || enc == ".." || strings.ContainsAny(enc, "/\\\x00") {
		t.Fatalf("SafeName(%q) = %q is not a safe single path segment", in, enc)
	}
	if got := decodeSafeName(t, enc); got != in {
		t.Fatalf("SafeName(%q) = %q decodes to %q", in, enc, got)
	}
}

func TestSafeNameIsInjectiveOnHostileNames(t *testing.T) {
	for _, in := range []string{
		"", ".", "..", "~", "~~", "~002E", "../", "../../x", "/", "//", "a/../b", "\x00", "a\x00.txt",
		"..\\..\\win", "con", "x\ny", "é", "e\u0301", "\u202e.txt", "😀.txt", "\xed\xa0\x80", "\xff\xfe",
		strings.Repeat(".", 3), "name with spaces.txt",
	} {
		checkSafeName(t, in)
	}
}

func FuzzSafeName(f *testing.F) {
	for _, seed := range []string{"", ".", "..", "~", "../etc/passwd", "a\x00b", "😀", "\xff", "bash.txt"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) { checkSafeName(t, in) })
}
