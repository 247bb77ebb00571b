package searchindex

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// On a generated mixed English/CJK/code history, every session whose
// documents hold a CJK word, an identifier part or one of the design's
// queries is found (recall 100%), and Latin token queries find no session
// where the token is only inside a longer word (no false positives).
func TestRecallOnAMixedHistory(t *testing.T) {
	f := newFixture(t)
	// Seed 3 puts every case below in at least one of 50 sessions (each
	// case checks it does); more sessions only slow the test under -race.
	m, err := benchcorpus.Generate(context.Background(), f.st, benchcorpus.Options{Sessions: 50, Seed: 3, TurnsMin: 2, TurnsMax: 5})
	if err != nil {
		t.Fatal(err)
	}
	docs := corpusDocuments(t, f.st, m.IDs)

	contains := func(w string) func(string) bool {
		return func(text string) bool { return strings.Contains(text, w) }
	}
	matches := func(re string) func(string) bool {
		return regexp.MustCompile(re).MatchString
	}
	// token is the design's Latin token rule: w between non-letters and
	// non-digits, ignoring case, or a camel-case part ending at such a
	// boundary (OpenAI).
	token := func(w string) func(string) bool {
		return matches(`(?i)(^|[^\pL\pN])` + w + `($|[^\pL\pN])|\p{Ll}` + w + `($|[^\pL\pN])`)
	}
	sep := `[_\-. ]?`
	recall := []struct {
		query string
		holds func(string) bool
	}{
		{benchcorpus.CJKInRun, contains(benchcorpus.CJKInRun)},
		{benchcorpus.CJKWord, contains(benchcorpus.CJKWord)},
		{"检查", contains("检查")},
		{"连接池", contains("连接池")},
		{benchcorpus.JapaneseWord, contains(benchcorpus.JapaneseWord)},
		{"接続を確認", contains("接続を確認")},
		{benchcorpus.KoreanWord, contains(benchcorpus.KoreanWord)},
		{benchcorpus.IdentifierPart, matches(`(?i)session` + sep + `header`)},
		{"session header", matches(`(?i)session` + sep + `header`)},
		{"loadSessionHeader", matches(`(?i)load` + sep + `session` + sep + `header`)},
		{"load_session_header", matches(`(?i)load` + sep + `session` + sep + `header`)},
		{"header.go", matches(`(?i)header\.go`)},
		{benchcorpus.RareID, contains(benchcorpus.RareID)},
		{benchcorpus.MidIdentifier, contains(benchcorpus.MidIdentifier)},
		{benchcorpus.Phrase, contains(benchcorpus.Phrase)},
		{"AI", token("AI")},
		{"cat", token("cat")},
	}
	for _, c := range recall {
		want := map[string]bool{}
		for id, texts := range docs {
			if slices.ContainsFunc(texts, c.holds) {
				want[id] = true
			}
		}
		if len(want) == 0 {
			t.Errorf("%q: the corpus holds it nowhere, so the case tests nothing", c.query)
			continue
		}
		got := allSessions(t, f, c.query)
		var missed []string
		for id := range want {
			if !got[id] {
				missed = append(missed, id)
			}
		}
		if len(missed) > 0 {
			t.Errorf("%q: found %d of the %d sessions holding it; missed %v", c.query, len(want)-len(missed), len(want), missed)
		}
		// Latin tokens: everything found holds the token.
		if c.query == "AI" || c.query == "cat" {
			for id := range got {
				if !want[id] {
					t.Errorf("%q found session %s, which holds it only inside a longer word", c.query, id)
				}
			}
		}
	}
	// The false-positive cases are in the corpus at all.
	for _, w := range []string{"BRAID", "category"} {
		n := 0
		for _, texts := range docs {
			if slices.ContainsFunc(texts, contains(w)) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("the corpus holds no %q", w)
		}
	}
}

// corpusDocuments reads every session's searchable documents from its log.
func corpusDocuments(t *testing.T, st *store.Store, ids []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, id := range ids {
		_, events, err := st.Inspect(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := sessionquery.BuildDocuments(id, events)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			out[id] = append(out[id], d.Text)
		}
	}
	return out
}

// allSessions pages through every session the query finds.
func allSessions(t *testing.T, f *fixture, query string) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	limit := 100
	req := sessionquery.SessionSearchRequest{Query: query, Limit: &limit}
	for {
		p := f.sessions(req)
		for _, it := range p.Items {
			found[it.Header.ID] = true
		}
		if p.NextCursor == nil {
			return found
		}
		req.Cursor = p.NextCursor
	}
}
