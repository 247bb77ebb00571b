package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
)

// Bounds on what one event costs. FTS5's highlight() appends every span
// with sqlite3_mprintf, so its cost grows with matches × document length
// and it never reaches an interrupt check: a 5 MB pasted log took minutes.
// So the index stores at most maxDocBytes of an event's text (the whole
// event stays readable through the service's reads), highlight() runs over
// a whole document only up to wholeHighlightBytes, and a longer document's
// first match is located one bounded window at a time (firstMatch).
const (
	maxDocBytes         = 256 << 10
	probeWindow         = 8 << 10
	probeOverlap        = 1 << 10
	wholeHighlightBytes = probeWindow + probeOverlap
)

// capText cuts text to at most maxDocBytes, after the last ASCII
// whitespace of its final window where there is one (so no word is cut in
// two and made to match a shorter query), else at a rune boundary.
func capText(text string) string {
	if len(text) <= maxDocBytes {
		return text
	}
	return text[:cutPoint(text, maxDocBytes, maxDocBytes-probeWindow)]
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

// probeWindows splits text into windows of about probeWindow bytes cut at
// whitespace, each overlapping the next by about probeOverlap bytes so a
// phrase that straddles a cut is whole in the earlier window. The windows
// cover text in order; their starts strictly increase.
func probeWindows(text string) [][2]int {
	var out [][2]int
	for start := 0; start < len(text); {
		pieceEnd := cutPoint(text, start+probeWindow, start+probeWindow/2)
		if pieceEnd <= start {
			// No rune boundary after start+probeWindow/2: text ends in a
			// malformed sequence. Take the rest.
			pieceEnd = len(text)
		}
		end := cutPoint(text, pieceEnd+probeOverlap, pieceEnd)
		if end < pieceEnd {
			end = pieceEnd
		}
		out = append(out, [2]int{start, end})
		start = pieceEnd
	}
	return out
}

// firstMatch returns the byte offset in text of the first span of match,
// or -1 if none is found. It probes the windows in order through a TEMP
// FTS5 table with the index's own tokenizer, so each highlight() sees at
// most one window (in its indexed form) and the work stops at the first
// window that matches. A phrase found in a window is a phrase of the
// document, because windows start and end at token boundaries; only a
// phrase spread over more than probeOverlap bytes, or a token longer than
// half a window, can be missed, and then the snippet starts where a
// document without a match would.
func firstMatch(ctx context.Context, q querier, text, match string) (int, error) {
	defer func() {
		// The probe rows belong to this call alone; a failure to drop them
		// is reported by the next call's insert, not here.
		_ = clearProbe(context.WithoutCancel(ctx), q)
	}()
	if err := clearProbe(ctx, q); err != nil {
		return -1, err
	}
	for i, w := range probeWindows(text) {
		form := searchtext.Segment(text[w[0]:w[1]])
		marked, ok, err := probeHighlight(ctx, q, int64(i+1), form.Text, match, "")
		if err != nil {
			return -1, err
		}
		if !ok {
			continue
		}
		if at := strings.IndexRune(marked, markStart); at >= 0 {
			return w[0] + form.Origin(at), nil
		}
	}
	return -1, nil
}

// highlightForm highlights a document whose indexed form differs from its
// stored text: the index's positions are the form's, so highlight() over
// the stored text would mark the wrong characters. The form is highlighted
// in the probe table and the markers are carried back to the text.
func highlightForm(ctx context.Context, q querier, form searchtext.Form, match string) (string, error) {
	defer func() { _ = clearProbe(context.WithoutCancel(ctx), q) }()
	if err := clearProbe(ctx, q); err != nil {
		return "", err
	}
	marked, _, err := probeHighlight(ctx, q, 1, form.Text, match, string(markEnd))
	if err != nil {
		return "", err
	}
	return form.Restore(marked, markStart, markEnd), nil
}

// probeHighlight adds text to the probe table as row id and highlights
// match in it; ok is false when the row does not match.
func probeHighlight(ctx context.Context, q querier, id int64, text, match, endMark string) (marked string, ok bool, err error) {
	if _, err := q.ExecContext(ctx, `INSERT INTO probe_windows(id, text) VALUES (?, ?)`, id, text); err != nil {
		return "", false, err
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO probe_fts(rowid, text) VALUES (?, ?)`, id, text); err != nil {
		return "", false, err
	}
	err = q.QueryRowContext(ctx, `SELECT highlight(probe_fts, 0, ?, ?) FROM probe_fts WHERE probe_fts MATCH ? AND rowid = ?`,
		string(markStart), endMark, match, id).Scan(&marked)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return marked, err == nil, err
}

// clearProbe empties the probe tables; 'delete-all' drops an external
// content table's index without re-tokenizing its rows.
func clearProbe(ctx context.Context, q querier) error {
	if _, err := q.ExecContext(ctx, `INSERT INTO probe_fts(probe_fts) VALUES ('delete-all')`); err != nil {
		return err
	}
	_, err := q.ExecContext(ctx, `DELETE FROM probe_windows`)
	return err
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
