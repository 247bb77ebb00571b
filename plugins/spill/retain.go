package spill

import (
	"strconv"
	"unicode/utf8"
)

// headTail keeps at most head bytes from the start of text and tail bytes
// from its end. A cut never splits a UTF-8 sequence: a partial sequence at
// the end of the head and continuation bytes at the start of the tail are
// dropped, and omitted counts what was really left out. Text that fits is
// returned whole.
func headTail(text string, head, tail int) (kept string, omitted int) {
	total := len(text)
	if head+tail >= total {
		return text, 0
	}
	head = headCut(text, head)
	start := tailCut(text, total-tail)
	return text[:head] + text[start:], total - head - (total - start)
}

// headCut moves a cut at i back to the start of the sequence it would
// split. Stray continuation bytes belong to no sequence and are cut as is.
func headCut(text string, i int) int {
	if i >= len(text) || utf8.RuneStart(text[i]) {
		return i
	}
	for j := i - 1; j >= 0 && j > i-utf8.UTFMax; j-- {
		if utf8.RuneStart(text[j]) {
			if _, size := utf8.DecodeRuneInString(text[j:]); j+size > i {
				return j
			}
			return i
		}
	}
	return i
}

// tailCut moves a tail start at i forward past the continuation bytes of
// the sequence it would split (at most utf8.UTFMax-1 of them).
func tailCut(text string, i int) int {
	for skip := 0; i < len(text) && skip < utf8.UTFMax-1 && !utf8.RuneStart(text[i]); skip++ {
		i++
	}
	return i
}

// notice is the text that replaces the omitted middle.
func notice(omitted int, ref Ref) string {
	return "(Omitted " + strconv.Itoa(omitted) + " bytes. Full formatted result stored at: " + ref.Locator + ". " + ref.RetrievalHint + ")"
}

// replacement builds the preview of text for a cap of max bytes: head and
// tail halves of what the notice leaves, a blank line, and the notice. The
// notice's size is reserved with the worst-case count (all of text), so the
// real, smaller count always fits. ok is false when even the notice alone is
// larger than the cap.
func replacement(text string, ref Ref, max int) (string, bool) {
	reserve := len(notice(len(text), ref)) + len("\n\n")
	budget := max - reserve
	if budget < 0 {
		budget = 0
	}
	preview, omitted := headTail(text, (budget+1)/2, budget/2)
	out := notice(omitted, ref)
	if preview != "" {
		out = preview + "\n\n" + out
	}
	if len(out) > max {
		return "", false
	}
	return out, true
}
