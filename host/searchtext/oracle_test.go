package searchtext

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/internal/ftsoracle"
)

// oracle is FTS5 itself with the index's tokenizer (internal/ftsoracle):
// it indexes documents and reports what FTS5 stored, so the tokenizer tests
// compare Tokens with SQLite, not with a model of it.
type oracle struct {
	tb testing.TB
	o  *ftsoracle.Oracle
}

// noTerm stands for a position FTS5 counted but stored no term at; no
// token's Text is this (0xFF never starts a token).
const noTerm = "\xff(no term)"

func newOracle(tb testing.TB) *oracle {
	tb.Helper()
	o, err := ftsoracle.Open(context.Background(), Tokenizer)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { o.Close() })
	return &oracle{tb: tb, o: o}
}

// index replaces the table's documents with docs, as rowids 1.., and
// returns the size FTS5 recorded for each.
func (o *oracle) index(docs []string) []int {
	o.tb.Helper()
	sizes, err := o.o.Index(context.Background(), docs)
	if err != nil {
		o.tb.Fatal(err)
	}
	return sizes
}

// terms returns the terms of the documents last indexed, by position, each
// document as long as its size; noTerm where FTS5 stored none.
func (o *oracle) terms(sizes []int) [][]string {
	o.tb.Helper()
	terms, err := o.o.Terms(context.Background(), sizes, noTerm)
	if err != nil {
		o.tb.Fatal(err)
	}
	return terms
}

// highlight returns the highlight() FTS5 makes of document doc (the only
// one indexed) for a query matching every token of toks: doc with '[' and
// ']' around the byte range FTS5's tokenizer reported for each.
func (o *oracle) highlight(toks []Token, doc string) string {
	o.tb.Helper()
	seen := map[string]bool{}
	var q []string
	for _, t := range toks {
		// The token's own bytes, quoted, are a phrase of exactly its term.
		if p := `"` + doc[t.Start:t.End] + `"`; !seen[p] {
			seen[p] = true
			q = append(q, p)
		}
	}
	out, ok, err := o.o.Highlight(context.Background(), strings.Join(q, " OR "), "[", "]")
	if err != nil || !ok {
		o.tb.Fatalf("highlight %q: %v (matched: %v)", doc, err, ok)
	}
	return out
}

// checkTokens fails unless Tokens and Count agree with what FTS5 stored
// for doc: its size and its terms by position.
func checkTokens(t testing.TB, doc string, size int, terms []string) {
	t.Helper()
	toks := Tokens(nil, doc)
	if n := Count(doc); n != len(toks) {
		t.Fatalf("%s: Count %d, Tokens %d", show(doc), n, len(toks))
	}
	for i, tok := range toks {
		if tok.Start < 0 || tok.Start >= tok.End || tok.End > len(doc) || i > 0 && tok.Start < toks[i-1].End {
			t.Fatalf("%s: token %d has range %d..%d", show(doc), i, tok.Start, tok.End)
		}
		if i >= len(terms) || tok.Text != terms[i] {
			term := "nothing"
			if i < len(terms) {
				term = show(terms[i])
			}
			t.Fatalf("%s: token %d, read from %s, is %s; FTS5 stored %s", show(doc), i, show(doc[tok.Start:tok.End]), show(tok.Text), term)
		}
	}
	if len(toks) != size || len(terms) != size {
		t.Fatalf("%s: %d tokens, FTS5 counted %d", show(doc), len(toks), size)
	}
}

// show quotes s for a failure message, naming every non-ASCII character
// and cutting it short.
func show(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		if b.Len() > 200 {
			fmt.Fprintf(&b, `..." (%d bytes)`, len(s))
			return b.String()
		}
		switch {
		case r == utf8.RuneError && s[i] != 0xEF:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r > 0x7E:
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
