package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"math"
)

// bm25Stats are the table-wide inputs of FTS5's bm25 for one phrase query:
// the row count, the total token count and the number of matching rows.
type bm25Stats struct {
	rows, tokens, hits int64
}

func (s bm25Stats) idf() float64 {
	idf := math.Log((float64(s.rows-s.hits) + 0.5) / (float64(s.hits) + 0.5))
	if idf <= 0 {
		idf = 1e-6
	}
	return idf
}

func (s bm25Stats) avgdl() float64 { return float64(s.tokens) / float64(s.rows) }

// bm25 evaluates FTS5's formula, operation for operation, for a document
// of tokens tokens holding freq instances of the phrase. The explicit
// conversions keep the compiler from fusing multiply-adds, so a document
// scored here and the same document scored by FTS5 tie exactly.
func bm25(freq, tokens float64, s bm25Stats) float64 {
	k1, b := 1.2, 0.75 // fts5_aux.c; variables so the arithmetic is float64's, not exact constants'
	avgdl := s.avgdl()
	x := float64(freq*(k1+1.0)) / float64(freq+float64(k1*(1-b+float64(b*tokens)/avgdl)))
	score := 0.0 + float64(s.idf()*x)
	return -1.0 * score
}

// phraseFreq recovers the phrase frequency FTS5 used to compute score for a
// document of the given length from the same table's statistics.
func phraseFreq(score, tokens float64, s bm25Stats) float64 {
	k1, b := 1.2, 0.75
	x := -score / s.idf()
	k := k1 * (1 - b + b*tokens/s.avgdl())
	if x >= k1+1 {
		return math.Inf(1)
	}
	return math.Round(x * k / (k1 + 1 - x))
}

// exactFreq recovers the phrase frequency FTS5 used to compute score for a
// document of the given length, and reports whether bm25 of it gives the
// score back exactly.
func exactFreq(score float64, tokens int32, s bm25Stats) (int32, bool) {
	f := phraseFreq(score, float64(tokens), s)
	if f < 1 || f > math.MaxInt32 || bm25(f, float64(tokens), s) != score {
		return 0, false
	}
	return int32(f), true
}

// rescale maps a score computed against the from table onto the to table's
// scale: both tables are searched separately (the live overlay is
// per-connection), but ranking must compare their documents as if they
// were one corpus. The persisted table, which holds nearly everything, is
// the common scale.
func rescale(score, tokens float64, from, to bm25Stats) float64 {
	if from == to {
		return score
	}
	return bm25(phraseFreq(score, tokens, from), tokens, to)
}

// tableTotals reads an FTS5 table's row and token counts from its
// "averages" record (rowid 1 of the %_data table: a varint row count, then
// one varint token total per column).
func tableTotals(ctx context.Context, q querier, dataTable string) (int64, int64, error) {
	var blob []byte
	err := q.QueryRowContext(ctx, `SELECT block FROM `+dataTable+` WHERE id = 1`).Scan(&blob)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && len(blob) == 0) {
		return 0, 0, nil // a table never written to, or emptied
	}
	if err != nil {
		return 0, 0, err
	}
	rows, n := varint(blob)
	if n == 0 {
		return 0, 0, errors.New("malformed FTS5 averages record")
	}
	tokens, m := varint(blob[n:])
	if m == 0 {
		return 0, 0, errors.New("malformed FTS5 averages record")
	}
	return int64(rows), int64(tokens), nil
}

// docTokens decodes an FTS5 docsize record of a one-column table.
func docTokens(blob []byte) float64 {
	v, n := varint(blob)
	if n == 0 {
		return 0
	}
	return float64(v)
}

// varint decodes SQLite's big-endian varint; n is 0 for a truncated one.
func varint(b []byte) (v uint64, n int) {
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}

// querier is what both *sql.Conn and *sql.Tx offer.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}
