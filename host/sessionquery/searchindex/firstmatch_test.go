package searchindex

import (
	"context"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
	"github.com/seed-e9b4dba4/dsh/internal/ftsoracle"
)

// The snippet's first match (searchtext.Form.FirstMatch) is where FTS5's
// own highlight() over the form puts it, for every document of a mixed
// corpus and queries of every kind, and it finds none where FTS5 finds
// none.
func TestFirstMatchAgreesWithFTS5(t *testing.T) {
	f := newFixture(t)
	m, err := benchcorpus.Generate(context.Background(), f.st, benchcorpus.Options{Sessions: 15, Seed: 5, TurnsMin: 1, TurnsMax: 3})
	if err != nil {
		t.Fatal(err)
	}
	docs := corpusDocuments(t, f.st, m.IDs)
	probe := newProbe(t)
	queries := []string{"the", "failing test", benchcorpus.CJKInRun, benchcorpus.CJKWord, "检查", benchcorpus.JapaneseWord,
		"接続を確認", benchcorpus.KoreanWord, benchcorpus.IdentifierPart, "session header", "loadSessionHeader",
		benchcorpus.MidIdentifier, "header.go", "AI", "OpenAI", "req", "config", "Config", "error", "handler request",
		"Café", "ÉCOLE", "naïve"}
	compared := 0
	for _, texts := range docs {
		for _, text := range texts {
			form := searchtext.Segment(text)
			for _, q := range queries {
				match := quoteFTS(q)
				got, ok := form.FirstMatch(phraseForms(match))
				marked, found := probe.highlight(form.Text, match)
				switch {
				case found != ok:
					t.Fatalf("%q in %q: Go finds a match: %v (at %d), FTS5: %v", q, text, ok, got, found)
				case !found:
					continue
				}
				compared++
				if want := form.Origin(strings.IndexRune(marked, markStart)); got != want {
					t.Fatalf("%q in %q: Go puts the first match at %d, FTS5 at %d", q, text, got, want)
				}
			}
		}
	}
	if compared < 100 {
		t.Errorf("only %d first matches compared: the corpus does not exercise the queries", compared)
	}
}

// probe is a one-document FTS5 table with the index's tokenizer
// (internal/ftsoracle), whose highlight() is the oracle of snippets.
type probe struct {
	t *testing.T
	o *ftsoracle.Oracle
}

func newProbe(t *testing.T) *probe {
	t.Helper()
	o, err := ftsoracle.Open(context.Background(), tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return &probe{t: t, o: o}
}

// highlight indexes text alone and highlights match in it.
func (p *probe) highlight(text, match string) (string, bool) {
	p.t.Helper()
	ctx := context.Background()
	if _, err := p.o.Index(ctx, []string{text}); err != nil {
		p.t.Fatal(err)
	}
	marked, ok, err := p.o.Highlight(ctx, match, string(markStart), string(markEnd))
	if err != nil {
		p.t.Fatal(err)
	}
	if !ok {
		return text, false
	}
	return marked, true
}
