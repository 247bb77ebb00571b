package acp

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Bounds on what one update shows. Clients built on the Go SDK drop the
// connection on a line over 10 MiB, and a card that large helps nobody; the
// model always sees the full result, only the editor's copy is cut.
const (
	maxShownText  = 256 << 10 // a tool result or a replayed message
	maxShownDiff  = 2 << 20   // old plus new text of one diff
	maxShownInput = 64 << 10  // a call's raw input, as JSON
)

// clip keeps the head and the (larger) tail of s within max bytes, cutting
// on rune boundaries, with a line saying how much was left out.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head := max * 2 / 5
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (max - head)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n… [%d bytes not shown] …\n%s", s[:head], tail-head, s[tail:])
}

// shownDiff is the diff content of d, or a note when it is too large to
// show.
func shownDiff(d *tools.Diff) sdk.ToolCallContent {
	size := len(d.NewText)
	if d.OldText != nil {
		size += len(*d.OldText)
	}
	if size > maxShownDiff {
		return sdk.ToolContent(sdk.TextBlock(fmt.Sprintf("%s: a change of %d bytes, too large to show as a diff", d.Path, size)))
	}
	return diffContent(d)
}

// shownInput is a call's raw input, or a note when it is too large.
func shownInput(v any) any {
	b, err := json.Marshal(v)
	if err != nil || len(b) <= maxShownInput {
		return v
	}
	return map[string]any{"note": fmt.Sprintf("input of %d bytes, too large to show", len(b))}
}
