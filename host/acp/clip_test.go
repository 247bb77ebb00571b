package acp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func TestClipKeepsHeadAndTailWithinTheBound(t *testing.T) {
	if got := clip("short", 10); got != "short" {
		t.Errorf("clip of a short text = %q", got)
	}
	long := strings.Repeat("é", 1000) + "END" // 2003 bytes, two-byte runes
	got := clip(long, 500)
	if !utf8.ValidString(got) {
		t.Error("clip split a rune")
	}
	if !strings.HasPrefix(got, "éé") || !strings.HasSuffix(got, "éEND") {
		t.Errorf("clip lost the head or the tail: %q…", got[:20])
	}
	if !strings.Contains(got, "bytes not shown] …") {
		t.Errorf("clip does not say what it left out")
	}
	if len(got) > 500+64 {
		t.Errorf("clipped to %d bytes", len(got))
	}
	head, _, _ := strings.Cut(got, "\n…")
	if len(head) > 200 {
		t.Errorf("head %d bytes, want the smaller part (2/5 of 500)", len(head))
	}
}

func TestOversizedDiffsAndInputsBecomeNotes(t *testing.T) {
	big := strings.Repeat("x", maxShownDiff)
	old := "y"
	c := shownDiff(&tools.Diff{Path: "/w/big.txt", OldText: &old, NewText: big})
	if c.Diff != nil || c.Content == nil || !strings.Contains(c.Content.Content.Text.Text, "too large to show as a diff") {
		t.Errorf("oversized diff = %+v", c)
	}
	if c := shownDiff(&tools.Diff{Path: "/w/a.txt", NewText: "a"}); c.Diff == nil {
		t.Error("a small diff became a note")
	}
	in := shownInput(json.RawMessage(`{"content":"` + strings.Repeat("z", maxShownInput) + `"}`))
	if m, ok := in.(map[string]any); !ok || !strings.Contains(m["note"].(string), "too large to show") {
		t.Errorf("oversized input = %v", in)
	}
	small := json.RawMessage(`{"a":1}`)
	if got := shownInput(small); string(got.(json.RawMessage)) != `{"a":1}` {
		t.Errorf("small input changed: %v", got)
	}
}
