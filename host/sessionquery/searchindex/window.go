package searchindex

import "unicode/utf8"

// maxDocBytes bounds the text the index holds of one event (the whole
// event stays readable through the service's reads): every search and
// write costs at most that much per document. A longer text is cut in its
// last capWindow bytes, after whitespace where there is some.
const (
	maxDocBytes = 256 << 10
	capWindow   = 8 << 10
)

// capText cuts text to at most maxDocBytes, after the last ASCII
// whitespace of its final window where there is one (so no word is cut in
// two and made to match a shorter query), else at a rune boundary.
func capText(text string) string {
	if len(text) <= maxDocBytes {
		return text
	}
	return text[:cutPoint(text, maxDocBytes, maxDocBytes-capWindow)]
}

// cutPoint returns a cut at or before i and after floor: just past the
// last ASCII whitespace in text[floor:i] (whitespace separates tokens under
// every tokenizer configuration we use), else the rune boundary at or
// before i. A cut at or beyond the end is the end.
func cutPoint(text string, i, floor int) int {
	if i >= len(text) {
		return len(text)
	}
	floor = max(floor, 0)
	for j := i; j > floor; j-- {
		switch text[j-1] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			return j
		}
	}
	for i > floor && !utf8.RuneStart(text[i]) {
		i--
	}
	return i
}

// markFirst returns text with a start marker at byte offset at (none when
// at < 0): all makeSnippet needs of a highlighted document is where its
// first span starts.
func markFirst(text string, at int) string {
	if at < 0 {
		return text
	}
	return text[:at] + string(markStart) + text[at:]
}
