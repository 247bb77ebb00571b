package searchindex

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// ftsSegments reads the number of segments of the persisted FTS5 index
// from its structure record (rowid 10 of the data table): a 4-byte
// cookie, an optional version marker, then the number of levels and the
// number of segments as SQLite varints.
func (f *fixture) ftsSegments() int {
	f.t.Helper()
	if err := f.ix.begin(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	defer f.ix.queue.release()
	var rec []byte
	if err := f.ix.db.conn.QueryRowContext(context.Background(), `SELECT block FROM persisted_fts_data WHERE id = 10`).Scan(&rec); err != nil {
		f.t.Fatal(err)
	}
	rec = rec[4:]
	if bytes.HasPrefix(rec, []byte{0xff, 0x00, 0x00, 0x01}) {
		rec = rec[4:]
	}
	_, n := sqliteVarint(rec)
	segments, _ := sqliteVarint(rec[n:])
	return int(segments)
}

// sqliteVarint decodes one SQLite varint (big-endian groups of 7 bits,
// the ninth byte whole) and returns it and its length.
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := range min(len(b), 9) {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v, len(b)
}

// descending builds n messages whose texts get shorter seq by seq, so that
// their rowids (length first, see docBits) fall as the log goes on.
func descending(next, n int, word string) []session.Event {
	out := make([]session.Event, n)
	for i := range out {
		out[i] = ev(next+i, session.TypeUserMessage, userMsg(word+strings.Repeat(" x", n-i)))
	}
	return out
}

// One catch-up transaction writes its documents to FTS5 as one new
// segment, whatever order their rowids come in: FTS5 starts a segment at
// every rowid lower than the one before, and each segment costs merges
// later.
func TestATransactionWritesItsDocumentsAsOneSegment(t *testing.T) {
	f, _ := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle first"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	// Without automatic merges, every segment written stays counted.
	f.exec(`INSERT INTO persisted_fts(persisted_fts, rank) VALUES ('automerge', 0)`)
	before := f.ftsSegments()

	f.persist(hdr("b", 2), descending(0, 40, "needle"))
	f.appendEvents("a", func(next int) []session.Event { return descending(next, 40, "needle") })
	if p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(10)}); len(p.Items) != 2 {
		t.Fatalf("hits: %+v", p.Items)
	}
	if got := f.ftsSegments(); got != before+1 {
		t.Errorf("%d segments after one catch-up, want %d", got, before+1)
	}
	f.checkFTS()
}
