package agent

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// boundContent cuts a tool result's content to at most limit bytes of text
// and raw (image, plugin) blocks, so that no tool — a grep with a huge
// max_results, an MCP server — can produce a result the session log
// refuses to store, which would end the turn with a write error. Text is
// cut at a line end when one is near, never inside a character; a raw
// block that does not fit is dropped whole. A note saying how much was
// cut and what to do replaces the rest. cut reports whether anything was.
func boundContent(content []session.ContentBlock, limit int) (out []session.ContentBlock, cut bool) {
	total := 0
	for _, b := range content {
		total += blockBytes(b)
	}
	if total <= limit {
		return content, false
	}
	left := limit
	for _, b := range content {
		n := blockBytes(b)
		if n <= left {
			out = append(out, b)
			left -= n
			continue
		}
		if b.Type == session.BlockText && left > 0 {
			out = append(out, session.TextBlock(cutText(b.Text, left)))
		}
		break
	}
	kept := 0
	for _, b := range out {
		kept += blockBytes(b)
	}
	note := fmt.Sprintf("[tool result cut: only its first %d of %d bytes are shown, the most one result may hold in the session; "+
		"narrow the call (a path, a glob, a pattern, fewer results) to see the rest]", kept, total)
	return append(out, session.TextBlock(note)), true
}

func blockBytes(b session.ContentBlock) int {
	if b.Type == session.BlockText {
		return len(b.Text)
	}
	return len(b.Raw)
}

// cutText returns at most n bytes of s: up to its last newline when that
// keeps at least half, else up to a character boundary.
func cutText(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	head := s[:n]
	if i := strings.LastIndexByte(head, '\n'); i >= n/2 {
		return head[:i+1]
	}
	return head
}
