package searchindex

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// docIDs returns the rowids of one persisted session's documents by seq.
func (f *fixture) docIDs(id string) map[int]int64 {
	f.t.Helper()
	if err := f.ix.begin(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	defer f.ix.queue.release()
	rows, err := f.ix.db.conn.QueryContext(context.Background(), `SELECT d.seq, d.doc_id FROM persisted_docs d
		JOIN persisted_sessions s ON d.doc_id >> ? = s.session_key WHERE s.session_id = ?`, docBits, id)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	out := map[int]int64{}
	for rows.Next() {
		var seq int
		var doc int64
		if err := rows.Scan(&seq, &doc); err != nil {
			f.t.Fatal(err)
		}
		out[seq] = doc
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// checkFTS runs FTS5's own integrity check: every content row indexed
// exactly as its text tokenizes, nothing else.
func (f *fixture) checkFTS() {
	f.t.Helper()
	f.exec(`INSERT INTO persisted_fts(persisted_fts, rank) VALUES ('integrity-check', 1)`)
}

// appendEvents appends events through a dsh writer and flushes them.
func (f *fixture) appendEvents(id string, build func(next int) []session.Event) {
	f.t.Helper()
	w, _, events, err := f.st.Open(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(build(len(events))...); err != nil {
		f.t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		f.t.Fatal(err)
	}
}

// An append keeps every existing rowid, inserts only the new documents,
// and the catalog row follows (events, last event time, title).
func TestAppendInsertsOnlyTheNewDocuments(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle one", "needle two", "needle three"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	before := f.docIDs("a")
	feed.reset()
	feed.takeAppended()

	f.appendEvents("a", func(next int) []session.Event {
		return []session.Event{
			ev(next, session.TypeUserMessage, userMsg("needle four")),
			ev(next+1, session.TypeSessionTitle, session.SessionTitle{Title: "appended title", MessageSeqs: []int{next}, Source: json.RawMessage(`{"kind":"user"}`)}),
		}
	})
	p := f.events(sessionquery.EventSearchRequest{SessionID: "a", Query: "four"})
	if len(p.Items) != 1 || p.Items[0].Seq != 3 {
		t.Fatalf("the appended event: %+v", p.Items)
	}
	if _, _, inspects := feed.reset(); len(inspects) != 0 {
		t.Errorf("the log was read whole: %v", inspects)
	}
	if got := feed.takeAppended(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("appended reads %v", got)
	}
	after := f.docIDs("a")
	for seq, id := range before {
		if after[seq] != id {
			t.Errorf("seq %d moved from rowid %d to %d", seq, id, after[seq])
		}
	}
	if len(after) != len(before)+1 {
		t.Errorf("%d documents after the append, want %d", len(after), len(before)+1)
	}
	f.checkFTS()
	sums, err := f.ix.SummariesOf(context.Background(), []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]sessionquery.SessionSummary
	f.withWholeIndex(func() {
		if want, err = f.ix.SummariesOf(context.Background(), []string{"a"}); err != nil {
			t.Fatal(err)
		}
	})
	if sums["a"].Title == nil || sums["a"].Title.Title != "appended title" || !reflect.DeepEqual(sums, want) {
		t.Errorf("catalog after the append:\n%+v\nwant what a whole read gives:\n%+v", sums, want)
	}
}

// withWholeIndex runs fn with f.ix swapped for a new in-memory index
// built whole from the same logs.
func (f *fixture) withWholeIndex(fn func()) {
	f.t.Helper()
	cfg := f.cfg
	cfg.Path = MemoryPath
	old := f.ix
	f.ix = f.newIndex(cfg)
	defer func() {
		_ = f.ix.Close()
		f.ix = old
	}()
	if err := f.ix.Sync(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	fn()
}

// Documents appended later tie with the earlier ones exactly as a whole
// index orders them: at equal score the shorter document, then the later
// time, then the later seq.
func TestTiesAcrossOldAndAppendedDocumentsKeepTheDocumentedWinner(t *testing.T) {
	f, feed := newFeedFixture(t)
	f.persist(hdr("a", 1), texts("needle same", "needle same"))
	f.persist(hdr("b", 1), texts("needle same", "needle longer text"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	feed.takeAppended()

	// a: an identical document, later: it wins. b: a longer one, later:
	// the shorter old one keeps winning.
	f.appendFlushed("a", "needle same")
	f.appendEvents("b", func(next int) []session.Event {
		return []session.Event{ev(next, session.TypeUserMessage, userMsg("needle same same"))}
	})
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(10)})
	if got := feed.takeAppended(); !reflect.DeepEqual(sorted(got), []string{"a", "b"}) {
		t.Fatalf("appended reads %v, want a and b", got)
	}
	best := map[string]int{}
	for _, h := range p.Items {
		best[h.Header.ID] = h.BestMatch.Seq
	}
	if !reflect.DeepEqual(best, map[string]int{"a": 2, "b": 0}) {
		t.Errorf("best matches %v, want a#2 (equal, later) and b#0 (shorter)", best)
	}
	// The same order as an index built whole from the logs.
	got := windowRanking(t, f, "needle", predicates{}, predicates{})
	var want []string
	f.withWholeIndex(func() { want = windowRanking(t, f, "needle", predicates{}, predicates{}) })
	if len(want) != 2 || !slices.Equal(got, want) {
		t.Errorf("ranking after appends %v, a whole index ranks %v", got, want)
	}
}
