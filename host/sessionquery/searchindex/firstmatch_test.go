package searchindex

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// The snippet's Go shortcut (searchtext.Form.FirstMatch) puts the first
// match where FTS5's own highlight() over the form does, for every
// document of a mixed corpus and queries of every kind (where it cannot
// tell, it says so and the probe table decides, as before).
func TestFirstMatchAgreesWithFTS5(t *testing.T) {
	f := newFixture(t)
	m, err := benchcorpus.Generate(context.Background(), f.st, benchcorpus.Options{Sessions: 15, Seed: 5, TurnsMin: 1, TurnsMax: 3})
	if err != nil {
		t.Fatal(err)
	}
	docs := corpusDocuments(t, f.st, m.IDs)
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, tempSchema); err != nil {
		t.Fatal(err)
	}
	queries := []string{"the", "failing test", benchcorpus.CJKInRun, benchcorpus.CJKWord, "检查", benchcorpus.JapaneseWord,
		"接続を確認", benchcorpus.KoreanWord, benchcorpus.IdentifierPart, "session header", "loadSessionHeader",
		benchcorpus.MidIdentifier, "header.go", "AI", "OpenAI", "req", "config", "Config", "error", "handler request"}
	decided := 0
	for _, texts := range docs {
		for _, text := range texts {
			if len(text) > wholeHighlightBytes {
				continue
			}
			form := searchtext.Segment(text)
			if !form.Changed() {
				continue
			}
			for _, q := range queries {
				match := quoteFTS(q)
				got, ok := form.FirstMatch(phraseForms(match))
				if !ok {
					continue // FTS5 decides; nothing to compare
				}
				decided++
				marked, found, err := probeHighlight(ctx, conn, 1, form.Text, match, "")
				if err != nil {
					t.Fatal(err)
				}
				if err := clearProbe(ctx, conn); err != nil {
					t.Fatal(err)
				}
				if !found {
					t.Fatalf("%q in %q: Go finds a match at %d, FTS5 none", q, text, got)
				}
				if want := form.Origin(strings.IndexRune(marked, markStart)); got != want {
					t.Fatalf("%q in %q: Go puts the first match at %d, FTS5 at %d", q, text, got, want)
				}
			}
		}
	}
	// The corpus is ASCII and CJK: the shortcut must be taken often.
	if decided < 100 {
		t.Errorf("Go decided only %d first matches: the shortcut is not taken", decided)
	}
	t.Logf("Go decided %d first matches, all where FTS5 puts them", decided)
}
