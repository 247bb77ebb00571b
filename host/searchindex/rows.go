package searchindex

import (
	"slices"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// docRow is one document as the index stores it: the text capped and
// sanitized, its length in code points and its indexed form. Rows are
// made where a log is read (prepareDocs), so that the single SQLite
// writer only inserts them: while a corpus is built the readers run on
// the other cores, and the writer is what bounds the build.
type docRow struct {
	seq     int
	typ     string
	time    int64
	surface string
	n       int    // code points of text
	text    string // what the content row holds
	form    string // what the FTS row indexes (searchtext.Segment of text)
}

// prepareDocs turns a session's documents into rows in tie-break order
// (code points ascending, time descending, seq descending), so that a
// row's position is its local number (see docBits).
func prepareDocs(docs []sessionquery.Document) []docRow {
	rows := make([]docRow, len(docs))
	for i, d := range docs {
		text, n := sanitizeText(capText(d.Text))
		rows[i] = docRow{seq: d.Seq, typ: d.Type, time: d.Time, surface: d.Surface, n: n, text: text,
			form: searchtext.Segment(text).Text}
	}
	slices.SortFunc(rows, func(a, b docRow) int {
		switch {
		case a.n != b.n:
			return cmpInt(int64(a.n), int64(b.n))
		case a.time != b.time:
			return cmpInt(b.time, a.time)
		default:
			return cmpInt(int64(b.seq), int64(a.seq))
		}
	})
	return rows
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
