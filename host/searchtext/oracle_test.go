package searchtext

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// oracle is FTS5 itself with the index's tokenizer: it indexes documents
// and reports what FTS5 stored, so the tokenizer tests compare Tokens with
// SQLite, not with a model of it.
type oracle struct {
	tb testing.TB
	db *sql.DB
}

// noTerm stands for a position FTS5 counted but stored no term at; no
// token's Text is this (0xFF never starts a token).
const noTerm = "\xff(no term)"

func newOracle(tb testing.TB) *oracle {
	tb.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	for _, q := range []string{
		`CREATE VIRTUAL TABLE temp.t USING fts5(x, tokenize='` + tokenizer + `')`,
		`CREATE VIRTUAL TABLE temp.v USING fts5vocab(temp, t, 'instance')`,
	} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	return &oracle{tb: tb, db: db}
}

// index replaces the table's documents with docs, as rowids 1.., in one
// transaction, and returns the size FTS5 recorded for each.
func (o *oracle) index(docs []string) []int {
	o.tb.Helper()
	ctx := context.Background()
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		o.tb.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM t`); err != nil {
		o.tb.Fatal(err)
	}
	for i, d := range docs {
		if _, err := tx.Exec(`INSERT INTO t(rowid, x) VALUES (?, ?)`, i+1, d); err != nil {
			o.tb.Fatalf("index %q: %v", d, err)
		}
	}
	sizes := make([]int, len(docs))
	rows, err := tx.Query(`SELECT id, sz FROM t_docsize`)
	if err != nil {
		o.tb.Fatal(err)
	}
	for rows.Next() {
		var id int
		var sz []byte
		if err := rows.Scan(&id, &sz); err != nil {
			o.tb.Fatal(err)
		}
		n, k := uvarint(sz)
		if k != len(sz) {
			o.tb.Fatalf("docsize %x of document %d is not one varint", sz, id)
		}
		sizes[id-1] = n
	}
	if err := rows.Err(); err != nil {
		o.tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		o.tb.Fatal(err)
	}
	return sizes
}

// terms returns the terms of the documents last indexed, by position, each
// document as long as its size; noTerm where FTS5 stored none.
func (o *oracle) terms(sizes []int) [][]string {
	o.tb.Helper()
	out := make([][]string, len(sizes))
	for i, n := range sizes {
		out[i] = make([]string, n)
		for k := range out[i] {
			out[i][k] = noTerm
		}
	}
	rows, err := o.db.Query(`SELECT doc, offset, term FROM v`)
	if err != nil {
		o.tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc, pos int
		var term []byte
		if err := rows.Scan(&doc, &pos, &term); err != nil {
			o.tb.Fatal(err)
		}
		if doc < 1 || doc > len(out) || pos < 0 || pos >= len(out[doc-1]) || out[doc-1][pos] != noTerm {
			o.tb.Fatalf("term %q of document %d at position %d: out of range or twice", term, doc, pos)
		}
		out[doc-1][pos] = string(term)
	}
	if err := rows.Err(); err != nil {
		o.tb.Fatal(err)
	}
	return out
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
	var out string
	err := o.db.QueryRow(`SELECT highlight(t, 0, '[', ']') FROM t WHERE t MATCH ?`, strings.Join(q, " OR ")).Scan(&out)
	if err != nil {
		o.tb.Fatalf("highlight %q: %v", doc, err)
	}
	return out
}

// uvarint decodes an SQLite varint, as FTS5 stores a column's size.
func uvarint(b []byte) (v, n int) {
	for i, c := range b {
		if i == 8 {
			return v<<8 | int(c), 9
		}
		v = v<<7 | int(c&0x7f)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return v, len(b)
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
