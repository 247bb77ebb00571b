package searchindex

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// filler is n bytes of words that never match the test queries, with a
// newline now and then so whitespace collapse is exercised.
func filler(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%13 == 12 {
			b.WriteString("lorem\n")
		} else {
			fmt.Fprintf(&b, "w%d ", i%97)
		}
	}
	return b.String()[:n]
}

// wholeSnippet is the oracle: highlight() over the whole document in a
// fresh FTS5 table with the index's tokenizer, then makeSnippet, exactly
// what the index did before it bounded the work.
func wholeSnippet(t *testing.T, text, query string, maxChars int) string {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE f USING fts5(text, tokenize='` + tokenizer + `')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO f(rowid, text) VALUES (1, ?)`, text); err != nil {
		t.Fatal(err)
	}
	var marked string
	err = db.QueryRow(`SELECT highlight(f, 0, ?, ?) FROM f WHERE f MATCH ?`, string(markStart), string(markEnd), quoteFTS(query)).Scan(&marked)
	if err != nil {
		t.Fatalf("oracle highlight for %q: %v", query, err)
	}
	return makeSnippet(marked, maxChars)
}

func TestLongDocumentSnippetsEqualWholeDocumentHighlights(t *testing.T) {
	// The space inside the phrase is the last one before the first cut.
	straddle := filler(capWindow - 8)
	tests := []struct {
		name, text, query string
	}{
		{"match at the start", "needle " + filler(40_000), "needle"},
		{"match in the first window", filler(5_000) + " needle " + filler(40_000), "needle"},
		{"phrase across the first cut", straddle + " alpha beta " + filler(40_000), "alpha beta"},
		{"match past the first window", filler(20_000) + " Café " + filler(20_000), "CAFE"},
		{"match near the end", filler(40_000) + " needle tail", "needle"},
		{"match as the last word", filler(40_000) + " needle", "needle"},
		{"many matches", strings.Repeat("needle ", 3_000) + filler(10_000), "needle"},
		{"later matches only", filler(30_000) + strings.Repeat(" needle\t", 50), "needle"},
	}
	f := newFixture(t)
	for i, tt := range tests {
		id := fmt.Sprintf("s%d", i)
		f.persist(hdr(id, int64(i)), texts(tt.text))
		f.live(hdr("live-"+id, int64(i)), texts(tt.text))
	}
	for i, tt := range tests {
		for _, id := range []string{fmt.Sprintf("s%d", i), fmt.Sprintf("live-s%d", i)} {
			p := f.events(sessionquery.EventSearchRequest{SessionID: id, Query: tt.query})
			if len(p.Items) != 1 {
				t.Fatalf("%s (%s): %d hits, want 1", tt.name, id, len(p.Items))
			}
			want := wholeSnippet(t, tt.text, tt.query, f.cfg.SnippetChars)
			if got := p.Items[0].Snippet; got != want {
				t.Errorf("%s (%s): snippet\n got %q\nwant %q", tt.name, id, got, want)
			}
		}
	}
}

func TestSessionSearchSnippetOfALongDocumentShowsItsMatch(t *testing.T) {
	f := newFixture(t)
	text := filler(100_000) + " the needle is here " + filler(100_000)
	f.persist(hdr("big", 1), texts(text))
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle"})
	if len(p.Items) != 1 {
		t.Fatalf("%d hits, want 1", len(p.Items))
	}
	if got, want := p.Items[0].BestMatch.Snippet, wholeSnippet(t, text, "needle", f.cfg.SnippetChars); got != want {
		t.Errorf("snippet\n got %q\nwant %q", got, want)
	}
}

func TestIndexedTextIsCappedPerEvent(t *testing.T) {
	f := newFixture(t)
	text := "headword " + filler(maxDocBytes) + " tailword"
	f.persist(hdr("big", 1), []session.Event{ev(0, session.TypeUserMessage, userMsg(text))})
	if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "headword"})); len(got) != 1 {
		t.Errorf("headword finds %v, want the session", got)
	}
	if got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "tailword"})); len(got) != 0 {
		t.Errorf("tailword past the cap finds %v, want nothing", got)
	}
	if n := f.count(`SELECT max(length(CAST(text AS BLOB))) FROM persisted_docs`); n > maxDocBytes || n < maxDocBytes-capWindow {
		t.Errorf("stored text is %d bytes, want at most %d and close to it", n, maxDocBytes)
	}
	if n := f.count(`SELECT max(codepoint_length) FROM persisted_docs`); n > maxDocBytes {
		t.Errorf("codepoint_length %d counts text past the cap", n)
	}
}

func TestCapTextCutsAfterWhitespace(t *testing.T) {
	text := strings.Repeat("abc ", maxDocBytes/4) + "tail"
	got := capText(text)
	if len(got) > maxDocBytes || !strings.HasSuffix(got, " ") {
		t.Errorf("capText kept %d bytes ending %q", len(got), got[len(got)-8:])
	}
	solid := strings.Repeat("é", maxDocBytes)
	got = capText(solid)
	if len(got) > maxDocBytes || len(got) < maxDocBytes-1 || !strings.HasSuffix(got, "é") {
		t.Errorf("capText without whitespace kept %d bytes, want a rune boundary at the cap", len(got))
	}
	if short := "short text"; capText(short) != short {
		t.Errorf("capText changed a short text")
	}
}
