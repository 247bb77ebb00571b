package searchindex

import (
	"slices"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// docRow is one document as the index stores it: the text capped and
// sanitized, its length in code points, its indexed form and its local
// rowid (see docBits). Rows are made where a log is read (prepareDocs), so
// that the single SQLite writer only inserts them: while a corpus is
// built the readers run on the other cores, and the writer is what bounds
// the build.
type docRow struct {
	seq     int
	typ     string
	time    int64
	surface string
	n       int    // code points of text
	text    string // what the content row holds
	form    string // what the FTS row indexes (searchtext.Segment of text)
	local   int64  // the low docBits of the rowid
	prev    int64  // renumbered documents: their former local (see renumberLater); else 0
}

// prepareDocs turns a session's documents (in seq order) into rows whose
// local rowids follow the tie-break order: ordinals count the documents
// in (time, seq) order, which is seq order unless a time goes back.
func prepareDocs(docs []sessionquery.Document) []docRow {
	rows := make([]docRow, len(docs))
	for i, d := range docs {
		rows[i] = newDocRow(d)
	}
	if timeOrdered(rows) {
		for ord := range rows {
			rows[ord].local = localRowid(rows[ord].n, ord)
		}
		return rows
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpTimeSeq(rows[a], rows[b]) })
	for ord, i := range order {
		rows[i].local = localRowid(rows[i].n, ord)
	}
	return rows
}

// appendedDocs turns the documents of events appended to a session into
// rows in (time, seq) order with the ordinals after its first ones, or
// reports false when the ordinals run out: the session is then indexed
// again whole. A row older than the session's latest document does not
// sort after all of them; the writer renumbers it with the documents it
// sorts before (renumberLater).
func appendedDocs(docs []sessionquery.Document, first int) ([]docRow, bool) {
	rows := make([]docRow, len(docs))
	for i, d := range docs {
		rows[i] = newDocRow(d)
	}
	if first+len(rows) > maxOrdinal+1 {
		return nil, false
	}
	if !timeOrdered(rows) {
		slices.SortFunc(rows, cmpTimeSeq)
	}
	for k := range rows {
		rows[k].local = localRowid(rows[k].n, first+k)
	}
	return rows, true
}

func newDocRow(d sessionquery.Document) docRow {
	text, n := sanitizeText(capText(d.Text))
	return docRow{seq: d.Seq, typ: d.Type, time: d.Time, surface: d.Surface, n: n, text: text,
		form: searchtext.Segment(text).Text}
}

// timeOrdered reports whether rows (in seq order) have non-decreasing
// times, so that seq order is (time, seq) order.
func timeOrdered(rows []docRow) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i].time < rows[i-1].time {
			return false
		}
	}
	return true
}

func cmpTimeSeq(a, b docRow) int {
	if c := cmpInt(a.time, b.time); c != 0 {
		return c
	}
	return cmpInt(int64(a.seq), int64(b.seq))
}

// localRowid is the low docBits of a document's rowid: shorter first,
// then later (time, seq) first.
func localRowid(n, ordinal int) int64 {
	return int64(min(n, maxLength))<<ordBits | int64(maxOrdinal-ordinal)
}

// maxDocTime is the latest time of rows (nil without rows).
func maxDocTime(rows []docRow) *int64 {
	if len(rows) == 0 {
		return nil
	}
	t := rows[0].time
	for _, r := range rows[1:] {
		t = max(t, r.time)
	}
	return &t
}

// rowBytes is the memory a batch holds for rows: text and form.
func rowBytes(rows []docRow) int {
	n := 0
	for _, r := range rows {
		n += len(r.text)
		if r.form != r.text {
			n += len(r.form)
		}
	}
	return n
}
