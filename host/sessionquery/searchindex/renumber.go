package searchindex

import (
	"context"
	"slices"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
)

// renumberLater makes room among a session's documents for appended rows
// (in (time, seq) order, numbered on from the session's documents by
// appendedDocs) whose earliest, at time after, is older than some of them.
// It takes the session's documents later than after out of t (the content
// rows now, the FTS rows queued like removeDocs does) and returns them
// with rows, renumbered together: the ordinals they all held, handed out
// again in (time, seq) order. Every document at or before after sorts
// before every appended one (an appended seq is later than any of the
// session's), so the rest keep their rowids and the result is the
// numbering a whole index gives (see docBits); the cost is that of the
// documents taken, not of the session.
//
// The documents taken leave the index here and come back under new
// rowids through addDocs: whatever is kept per document beside the
// content and FTS rows must follow both. A document taken has prev set to
// its former low docBits; the term summaries relabel their points with it
// (relabelSession).
func (w *txWriter) renumberLater(ctx context.Context, t tables, key int64, after int64, rows []docRow) ([]docRow, error) {
	lo, hi := key<<docBits, key<<docBits|docMask
	q, err := w.c.QueryContext(ctx, `SELECT doc_id, seq, type, time, surface, codepoint_length, text FROM `+t.docs+`
		WHERE doc_id BETWEEN ? AND ? AND time > ?`, lo, hi, after)
	if err != nil {
		return nil, err
	}
	var taken []int64
	merged := slices.Clone(rows)
	for q.Next() {
		var id int64
		var r docRow
		if err := q.Scan(&id, &r.seq, &r.typ, &r.time, &r.surface, &r.n, &r.text); err != nil {
			q.Close()
			return nil, err
		}
		// The index tokenized the text's indexed form; the delete must
		// give it again, and the row comes back with it.
		r.form = searchtext.Segment(r.text).Text
		r.prev = id & docMask
		w.ops = append(w.ops, ftsOp{fts: t.fts, del: true, id: id, text: r.form})
		taken = append(taken, id)
		merged = append(merged, r)
	}
	if err := q.Close(); err != nil {
		return nil, err
	}
	del, err := w.stmt(ctx, `DELETE FROM `+t.docs+` WHERE doc_id = ?`)
	if err != nil {
		return nil, err
	}
	ords := make([]int, 0, len(merged))
	for _, id := range taken {
		if _, err := del.ExecContext(ctx, id); err != nil {
			return nil, err
		}
		ords = append(ords, ordinalOf(id))
	}
	for _, r := range rows {
		ords = append(ords, ordinalOf(r.local))
	}
	slices.Sort(ords)
	slices.SortFunc(merged, cmpTimeSeq)
	for i := range merged {
		merged[i].local = localRowid(merged[i].n, ords[i])
	}
	return merged, nil
}

// ordinalOf is the ordinal a rowid (or its low docBits) holds.
func ordinalOf(rowid int64) int {
	return maxOrdinal - int(rowid&maxOrdinal)
}
