package spill

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTailCutsOnCharacterBoundaries(t *testing.T) {
	cases := []struct {
		name       string
		text       string
		head, tail int
		want       string
		omitted    int
	}{
		{"fits whole", "abcdef", 3, 3, "abcdef", 0},
		{"fits with room", "abc", 5, 5, "abc", 0},
		{"ascii", "abcdefghij", 3, 2, "abcij", 5},
		{"nothing kept", "abcdef", 0, 0, "", 6},
		// é is 2 bytes, € 3, 😀 4.
		{"head cut inside é drops it", "aébcdef", 2, 1, "af", 6},
		{"head cut after é keeps it", "aébcdef", 3, 1, "aéf", 4},
		{"head cut inside 😀 drops it", "a😀bcdefg", 4, 0, "a", 10},
		{"tail cut inside € drops it", "abcdef€", 1, 2, "a", 8},
		{"tail cut at € keeps it", "abcdef€", 1, 3, "a€", 5},
		{"tail cut inside 😀 drops it", "abcdefg😀", 0, 3, "", 11},
		{"both cuts inside", "€€€€€€", 4, 4, "€€", 12},
		{"stray continuation bytes are ordinary bytes", "a\x80\x80\x80bcdefgh", 3, 0, "a\x80\x80", 8},
		{"invalid lead byte", "\xffabcdef", 1, 1, "\xfff", 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, omitted := headTail(tc.text, tc.head, tc.tail)
			if got != tc.want || omitted != tc.omitted {
				t.Errorf("headTail(%q, %d, %d) = %q, %d; want %q, %d", tc.text, tc.head, tc.tail, got, omitted, tc.want, tc.omitted)
			}
			if utf8.ValidString(tc.text) && !utf8.ValidString(got) {
				t.Errorf("cut produced invalid UTF-8 %q", got)
			}
		})
	}
}

func TestReplacementExactText(t *testing.T) {
	text := strings.Repeat("0123456789", 100)
	ref := Ref{Locator: "/s/x.txt", Bytes: len(text), RetrievalHint: RetrievalHint}
	got, ok := replacement(text, ref, 200)
	// reserve = 131 + 2 = 133, budget 67: head 34, tail 33, omitted 933
	// (one digit shorter than the reserved 1000, so the result is 199 bytes).
	want := "0123456789012345678901234567890123" + "789012345678901234567890123456789" + "\n\n" +
		"(Omitted 933 bytes. Full formatted result stored at: /s/x.txt. Use read with offset/limit, or grep this path to search within it.)"
	if !ok || got != want {
		t.Fatalf("replacement = %q, %v\nwant %q", got, ok, want)
	}
	if len(got) != 199 {
		t.Errorf("len = %d", len(got))
	}
}

func TestReplacementWithMultiByteCharacterAtTheCut(t *testing.T) {
	// 969 bytes; the notice for 969 bytes is 130 bytes, so a cap of 199
	// leaves a budget of 67: a 34-byte head ending inside the "é" at bytes
	// 33-34 and a 33-byte tail starting inside the "€" before the z's.
	text := strings.Repeat("a", 33) + "é" + strings.Repeat("m", 900) + "€" + strings.Repeat("z", 31)
	ref := Ref{Locator: "/s/x.txt", RetrievalHint: RetrievalHint}
	if len(text) != 969 || len(notice(969, ref)) != 130 {
		t.Fatalf("fixture drifted: %d bytes, notice %d", len(text), len(notice(969, ref)))
	}
	got, ok := replacement(text, ref, 199)
	if !ok {
		t.Fatal("replacement did not fit")
	}
	preview, omitted := parseReplacement(t, got, ref)
	if wantPreview := strings.Repeat("a", 33) + strings.Repeat("z", 31); preview != wantPreview {
		t.Errorf("preview = %q, want %q", preview, wantPreview)
	}
	if want := len(text) - 64; omitted != want {
		t.Errorf("omitted = %d, want %d (the bytes really dropped)", omitted, want)
	}
	if strings.ContainsRune(got, utf8.RuneError) || !utf8.ValidString(got) {
		t.Errorf("replacement contains a broken character: %q", got)
	}
}

func TestReplacementNeedsRoomForTheNotice(t *testing.T) {
	text := strings.Repeat("x", 1000)
	ref := Ref{Locator: "/s/x.txt", RetrievalHint: RetrievalHint}
	noticeOnly := len(notice(1000, ref))
	cases := []struct {
		max     int
		ok      bool
		preview bool
	}{
		{0, false, false},
		{noticeOnly - 1, false, false},
		{noticeOnly, true, false},
		{noticeOnly + 2, true, false},
		{noticeOnly + 3, true, true}, // one byte of budget: a 1-byte head
	}
	for _, tc := range cases {
		got, ok := replacement(text, ref, tc.max)
		if ok != tc.ok {
			t.Errorf("max %d: ok = %v, want %v", tc.max, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if len(got) > tc.max {
			t.Errorf("max %d: %d bytes", tc.max, len(got))
		}
		if hasPreview := !strings.HasPrefix(got, "(Omitted"); hasPreview != tc.preview {
			t.Errorf("max %d: %q, preview %v", tc.max, got, tc.preview)
		}
	}
}

// parseReplacement splits a replacement into its preview and the omitted
// count, checking the notice's exact wording.
func parseReplacement(t *testing.T, got string, ref Ref) (preview string, omitted int) {
	t.Helper()
	re := regexp.MustCompile(`(?s)^(?:(.*)\n\n)?\(Omitted (\d+) bytes\. Full formatted result stored at: ` +
		regexp.QuoteMeta(ref.Locator) + `\. ` + regexp.QuoteMeta(ref.RetrievalHint) + `\)$`)
	m := re.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("not a replacement: %q", got)
	}
	n, _ := strconv.Atoi(m[2])
	return m[1], n
}

func TestReplacementPropertiesOverSizesAndCaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 5))
	pieces := []string{"a", "b\n", "é", "€", "😀", "\x80", " "}
	ref := Ref{Locator: "/tmp/dsh-spill-123/session-0123456789ab/0123456789ab-bash.txt", RetrievalHint: RetrievalHint}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		size := rng.IntN(6000)
		for b.Len() < size {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		limit := rng.IntN(len(text) + 1)
		got, ok := replacement(text, ref, limit)
		reserve := len(notice(len(text), ref)) + 2
		if !ok {
			if limit >= reserve-2 {
				t.Fatalf("text %d bytes, cap %d: refused although the notice fits", len(text), limit)
			}
			continue
		}
		if len(got) > limit {
			t.Fatalf("text %d bytes, cap %d: replacement has %d bytes", len(text), limit, len(got))
		}
		preview, omitted := parseReplacement(t, got, ref)
		if omitted != len(text)-len(preview) {
			t.Fatalf("omitted %d, but %d of %d bytes were kept", omitted, len(preview), len(text))
		}
		budget := max(0, limit-reserve)
		headWant := (budget + 1) / 2
		found := false
		for h := max(0, headWant-3); h <= headWant && h <= len(preview); h++ {
			tailLen := len(preview) - h
			if preview[:h] == text[:h] && preview[h:] == text[len(text)-tailLen:] && tailLen <= budget/2 && tailLen >= budget/2-3 {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("text %d bytes, cap %d: preview %q is not a head/tail of the text", len(text), limit, preview)
		}
		if utf8.ValidString(text) && !utf8.ValidString(preview) {
			t.Fatalf("cut split a character: %q", preview)
		}
	}
}
