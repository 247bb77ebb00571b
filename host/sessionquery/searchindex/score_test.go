package searchindex

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestBM25MatchesFTS5 checks the Go formula against FTS5's own rank, bit
// for bit, and that a frequency recovered from a score is the real one:
// both are what lets live and persisted documents share one scale.
func TestBM25MatchesFTS5(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE f USING fts5(text)`); err != nil {
		t.Fatal(err)
	}
	docs := []string{
		"needle", "needle needle", "needle in a haystack of many words", "no match here",
		"needle needle needle and a tail", "a b c d e f g h needle", "nothing", "needle, needle; needle! needle?",
	}
	for _, d := range docs {
		if _, err := db.Exec(`INSERT INTO f(text) VALUES (?)`, d); err != nil {
			t.Fatal(err)
		}
	}
	st, err := stats(ctx, db, "f", `"needle"`)
	if err != nil {
		t.Fatal(err)
	}
	if st.rows != int64(len(docs)) || st.hits != 6 {
		t.Fatalf("stats = %+v", st)
	}
	rows, err := db.Query(`SELECT f.rank, f_docsize.sz, highlight(f, 0, '[', ']') FROM f JOIN f_docsize ON f_docsize.id = f.rowid WHERE f MATCH '"needle"'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var rank float64
		var sz []byte
		var marked string
		if err := rows.Scan(&rank, &sz, &marked); err != nil {
			t.Fatal(err)
		}
		tokens := docTokens(sz)
		freq := phraseFreq(rank, tokens, st)
		if want := float64(countByte(marked, '[')); freq != want {
			t.Errorf("%q: recovered frequency %v, want %v", marked, freq, want)
		}
		if got := bm25(freq, tokens, st); got != rank {
			t.Errorf("%q: bm25 = %v, FTS5 rank = %v", marked, got, rank)
		}
		other := bm25Stats{rows: 1000, tokens: 9000, hits: 40}
		if back := phraseFreq(rescale(rank, tokens, st, other), tokens, other); back != freq {
			t.Errorf("%q: rescaling lost the frequency (%v -> %v)", marked, freq, back)
		}
		n++
	}
	if n != 6 {
		t.Errorf("%d matches", n)
	}
}

func countByte(s string, b byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			n++
		}
	}
	return n
}

func TestVarintDecodesSQLiteVarints(t *testing.T) {
	tests := []struct {
		in   []byte
		want uint64
		n    int
	}{
		{[]byte{0x04}, 4, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1<<64 - 1, 9},
		{[]byte{0x81}, 0, 0},
		{nil, 0, 0},
	}
	for _, tt := range tests {
		if v, n := varint(tt.in); v != tt.want || n != tt.n {
			t.Errorf("varint(%x) = %d, %d; want %d, %d", tt.in, v, n, tt.want, tt.n)
		}
	}
}

// TestExactFreqRecoversEveryFrequency scores documents of many lengths and
// frequencies on tables of several shapes: a recovered frequency is never
// a wrong one, and in the range documents have (a phrase up to 2,000 times
// in a document of up to 262,144 tokens) it is always recovered.
func TestExactFreqRecoversEveryFrequency(t *testing.T) {
	tables := []bm25Stats{{rows: 40, tokens: 400, hits: 3}, {rows: 2_000_000, tokens: 90_000_000, hits: 1_800},
		{rows: 2_000_000, tokens: 90_000_000, hits: 1_999_000}, {rows: 50_000, tokens: 20_000_000, hits: 25_000}}
	missed := 0
	for _, s := range tables {
		for f := 1; f <= 2000; f += 1 + f/16 {
			for dl := f; dl <= 1<<18; dl += 1 + dl/8 {
				score := bm25(float64(f), float64(dl), s)
				got, ok := exactFreq(score, int32(dl), s)
				switch {
				case ok && int(got) != f:
					t.Fatalf("%+v: f %d, length %d: recovered %d", s, f, dl, got)
				case !ok:
					missed++
				}
			}
		}
	}
	if missed > 0 {
		t.Errorf("%d frequencies were not recovered", missed)
	}
}
