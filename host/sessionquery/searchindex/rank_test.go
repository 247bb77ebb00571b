package searchindex

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// windowRanking is the oracle: every persisted match ranked in one SQL
// statement with a window over all of them, the way the index ranked
// before it streamed (the ranking contract of doc.go).
func windowRanking(t *testing.T, f *fixture, query string, sp, ep predicates) []string {
	t.Helper()
	inner := `SELECT persisted_fts.rowid AS doc_id, persisted_fts.rank AS score FROM persisted_fts`
	if ep.count() > 0 {
		inner += ` JOIN persisted_docs ON persisted_docs.doc_id = persisted_fts.rowid`
	}
	inner += ` WHERE persisted_fts MATCH ?` + ep.where()
	q := `WITH h AS (` + inner + `),
		m AS (SELECT doc_id, score, row_number() OVER (PARTITION BY doc_id >> ` + strconv.Itoa(docBits) + ` ORDER BY score, doc_id) AS rn FROM h)
		SELECT c.session_id, d.seq
		FROM m
		JOIN (SELECT session_key, session_id, created_at, cwd, parent_session, 0 AS live, 1 AS persisted FROM persisted_sessions) c
			ON c.session_key = m.doc_id >> ` + strconv.Itoa(docBits) + `
		JOIN persisted_docs d ON d.doc_id = m.doc_id
		WHERE m.rn = 1` + sp.where() + `
		ORDER BY m.score, d.codepoint_length, d.time DESC, c.session_id, d.seq DESC`
	if err := f.ix.begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.ix.queue.release()
	args := append(append([]any{quoteFTS(query)}, ep.args...), sp.args...)
	rows, err := f.ix.db.conn.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		var seq int
		if err := rows.Scan(&id, &seq); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s#%d", id, seq))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStreamedRankingEqualsTheWholeWindowRanking pages through more
// sessions than one ranking keeps, most of them tied on score (identical
// documents, so length, time and id decide), with session and event
// filters that remove some of the strongest, and compares every page with
// the oracle.
func TestStreamedRankingEqualsTheWholeWindowRanking(t *testing.T) {
	f := newFixture(t)
	for i := range 140 {
		h := hdr(fmt.Sprintf("s%03d", (i*37)%140), int64(i%9))
		if i%3 == 0 {
			h.Cwd = session.Ptr("/other")
		}
		msgs := []string{
			strings.Repeat("needle ", 1+i%4) + strings.Repeat("hay ", i%5),
			"needle in the " + strings.Repeat("stack ", i%7),
			"needle",
		}
		if i%11 == 0 {
			msgs = msgs[:2]
		}
		f.persist(h, texts(msgs...))
	}
	tests := []struct {
		name string
		sf   []sessionquery.SessionFilter
		ef   []sessionquery.EventFilter
	}{
		{"no filters", nil, nil},
		{"cwd", []sessionquery.SessionFilter{{Kind: "cwd", NullableValues: nullable(strp("/w"))}}, nil},
		{"created-at", []sessionquery.SessionFilter{{Kind: "created-at", From: floatp(3), To: floatp(6)}}, nil},
		{"type", nil, []sessionquery.EventFilter{{Kind: "type", Values: []string{session.TypeAssistantMessage}}}},
		{"seq and cwd", []sessionquery.SessionFilter{{Kind: "cwd", NullableValues: nullable(strp("/other"))}},
			[]sessionquery.EventFilter{{Kind: "seq", From: floatp(1), To: floatp(1)}}},
	}
	for _, tt := range tests {
		for _, query := range []string{"needle", "needle in"} {
			t.Run(tt.name+"/"+query, func(t *testing.T) {
				sp, err := compileSessionPredicates(tt.sf)
				if err != nil {
					t.Fatal(err)
				}
				ep, err := compileEventPredicates(tt.ef)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				req := sessionquery.SessionSearchRequest{Query: query, Limit: intp(23), SessionFilters: tt.sf, EventFilters: tt.ef}
				for {
					p := f.sessions(req)
					for _, it := range p.Items {
						got = append(got, fmt.Sprintf("%s#%d", it.Header.ID, it.BestMatch.Seq))
					}
					if p.NextCursor == nil {
						break
					}
					req.Cursor = p.NextCursor
				}
				want := windowRanking(t, f, query, sp, ep)
				if len(want) < 30 {
					t.Fatalf("oracle found %d sessions: the corpus does not exercise the ranking", len(want))
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("streamed ranking differs from the window ranking\n got %v\nwant %v", got, want)
				}
			})
		}
	}
}

// TestAFirstPageResolvesOnlyWhatItShows: a page of 5 over 140 sessions of
// distinct strength reads the rows of one batch of winners, not all of
// them, and the next page resolves on from the same ranking.
func TestAFirstPageResolvesOnlyWhatItShows(t *testing.T) {
	f := newFixture(t)
	for i := range 140 {
		f.persist(hdr(fmt.Sprintf("s%03d", i), int64(i)), texts(strings.Repeat("needle ", 1+i%50)+strings.Repeat("hay ", i)))
	}
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(5)})
	if len(p.Items) != 5 || p.NextCursor == nil {
		t.Fatalf("first page has %d items, cursor %v", len(p.Items), p.NextCursor)
	}
	r := f.ix.ranked.persisted.(*persistedRanking)
	if len(r.winners) != 140 || r.next >= len(r.winners) {
		t.Fatalf("resolved %d of %d winners for a page of 5", r.next, len(r.winners))
	}
	first := r.next
	p = f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(5), Cursor: p.NextCursor})
	if len(p.Items) != 5 {
		t.Fatalf("second page has %d items", len(p.Items))
	}
	if f.ix.ranked.persisted != r || r.next < first {
		t.Error("the second page ranked again instead of resolving on from the kept ranking")
	}
}

// TestAScopedRankingHoldsOnlyTheScopesWinners: a search confined to one
// workspace keeps the winners of that workspace's sessions only, so its
// pages resolve no other workspace's rows, and its pages are those of the
// whole ranking with the other sessions left out.
func TestAScopedRankingHoldsOnlyTheScopesWinners(t *testing.T) {
	f := newFixture(t)
	for i := range 40 {
		h := hdr(fmt.Sprintf("s%03d", i), int64(i))
		if i%4 != 0 {
			h.Cwd = session.Ptr("/other")
		}
		f.persist(h, texts(strings.Repeat("needle ", 1+i)))
	}
	scope := []sessionquery.SessionFilter{{Kind: sessionquery.KindCwd, NullableValues: []*string{session.Ptr("/w")}}}
	var got []string
	var cursor *string
	for {
		p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", SessionFilters: scope, Limit: intp(4), Cursor: cursor})
		if len(got) == 0 {
			if r := f.ix.ranked.persisted.(*persistedRanking); len(r.winners) != 10 {
				t.Errorf("the first page of the workspace's search ranked %d winners, want its 10 sessions'", len(r.winners))
			}
		}
		for _, it := range p.Items {
			got = append(got, it.Header.ID)
		}
		if cursor = p.NextCursor; cursor == nil {
			break
		}
	}
	want := []string{"s036", "s032", "s028", "s024", "s020", "s016", "s012", "s008", "s004", "s000"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pages = %v, want %v", got, want)
	}
}

// TestAContinuationPagePreparesNothing: a query's terms are looked up and
// promoted by its first page; its next pages are cut from that page's
// ranking and look nothing up. (A term that turns common between the
// pages, here by lowering the threshold, is left to the next first page.)
func TestAContinuationPagePreparesNothing(t *testing.T) {
	f := newFixture(t)
	for i := range 6 {
		f.persist(hdr(fmt.Sprintf("s%d", i), int64(i)), texts("needle"))
	}
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(2)})
	if p.NextCursor == nil {
		t.Fatal("the first page has no continuation")
	}
	f.ix.trackMin = 2
	if p = f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(2), Cursor: p.NextCursor}); len(p.Items) != 2 {
		t.Fatalf("the second page has %d items", len(p.Items))
	}
	var n int
	if err := f.ix.db.conn.QueryRowContext(context.Background(), `SELECT count(*) FROM tracked_terms WHERE term = 'needle'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("a continuation page promoted the query's term")
	}
	f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(2)})
	if err := f.ix.db.conn.QueryRowContext(context.Background(), `SELECT count(*) FROM tracked_terms WHERE term = 'needle'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Error("the next first page did not promote the term")
	}
}
