package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// class is how unicode61 treats a code point.
type class uint8

const (
	separator class = iota // ends a token, never part of one
	alnum                  // starts a token and continues one
	mark                   // continues a token, never starts one (a diacritic)
)

// info is what unicode61 with remove_diacritics 2 makes of one code point.
type info struct {
	class class
	fold  rune // what it becomes inside a token: 0 if dropped; itself for a separator
}

const tokenizer = `unicode61 remove_diacritics 2`

// index is a scratch FTS5 table with the index's tokenizer and an instance
// vocabulary over it.
type index struct {
	db *sql.DB
}

func openIndex(ctx context.Context) (*index, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE VIRTUAL TABLE temp.t USING fts5(x, tokenize='` + tokenizer + `')`,
		`CREATE VIRTUAL TABLE temp.v USING fts5vocab(temp, t, 'instance')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return &index{db: db}, nil
}

func (x *index) close() { x.db.Close() }

// tokens returns the terms FTS5 stores for text, by position, as many as
// the document size it records; a position without a term is "".
func (x *index) tokens(ctx context.Context, text string) ([]string, error) {
	if _, err := x.db.ExecContext(ctx, `DELETE FROM t`); err != nil {
		return nil, err
	}
	if _, err := x.db.ExecContext(ctx, `INSERT INTO t(rowid, x) VALUES (1, ?)`, text); err != nil {
		return nil, err
	}
	var sz []byte
	if err := x.db.QueryRowContext(ctx, `SELECT sz FROM t_docsize WHERE id = 1`).Scan(&sz); err != nil {
		return nil, err
	}
	n, k := uvarint(sz)
	if k != len(sz) {
		return nil, fmt.Errorf("docsize %x is not one varint", sz)
	}
	rows, err := x.db.QueryContext(ctx, `SELECT term, offset FROM v`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]string, n)
	seen := make([]bool, n)
	for rows.Next() {
		var term []byte
		var pos int
		if err := rows.Scan(&term, &pos); err != nil {
			return nil, err
		}
		if pos < 0 || pos >= n || seen[pos] {
			return nil, fmt.Errorf("term at position %d of %d twice or out of range", pos, n)
		}
		seen[pos] = true
		out[pos] = string(term)
	}
	return out, rows.Err()
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

// derive asks FTS5 about every scalar value c, indexed by c (a surrogate
// is a separator, as FTS5 reads it as U+FFFD): "a<c>b" is one token if c
// is a token character, and then holds what c folds to, and two tokens
// otherwise; c alone between markers is a token if c can start one.
func derive(ctx context.Context, x *index) ([]info, error) {
	all := make([]info, utf8.MaxRune+1)
	var cps []rune
	for c := range rune(len(all)) {
		all[c] = info{class: separator, fold: c}
		if utf8.ValidRune(c) {
			cps = append(cps, c)
		}
	}
	for chunk := range slices.Chunk(cps, 4096) {
		var b strings.Builder
		for _, c := range chunk {
			fmt.Fprintf(&b, "a%cb qz %c qz ", c, c)
		}
		toks, err := x.tokens(ctx, b.String())
		if err != nil {
			return nil, err
		}
		next := func() string {
			if len(toks) == 0 {
				return "<none>"
			}
			t := toks[0]
			toks = toks[1:]
			return t
		}
		for _, c := range chunk {
			if all[c], err = parse(c, next); err != nil {
				return nil, fmt.Errorf("U+%04X: %w", c, err)
			}
		}
		if len(toks) != 0 {
			return nil, fmt.Errorf("%d tokens left over after U+%04X", len(toks), chunk[len(chunk)-1])
		}
	}
	return all, nil
}

// parse reads the tokens of "a<c>b qz <c> qz ".
func parse(c rune, next func() string) (info, error) {
	in := info{class: separator, fold: c}
	var fold string
	if t := next(); t == "a" {
		if t := next(); t != "b" {
			return in, fmt.Errorf(`"a<c>b" is "a" and %q`, t)
		}
	} else {
		if len(t) < 2 || t[0] != 'a' || t[len(t)-1] != 'b' {
			return in, fmt.Errorf(`"a<c>b" is %q`, t)
		}
		fold = t[1 : len(t)-1]
		in.class = mark
	}
	if t := next(); t != "qz" {
		return in, fmt.Errorf(`want "qz", got %q`, t)
	}
	if t := next(); t != "qz" {
		if in.class == separator {
			return in, fmt.Errorf("a separator alone is the token %q", t)
		}
		if t != fold {
			return in, fmt.Errorf("folds to %q in a token but %q alone", fold, t)
		}
		in.class = alnum
		if t := next(); t != "qz" {
			return in, fmt.Errorf(`want "qz" after c alone, got %q`, t)
		}
	}
	if in.class == separator {
		return in, nil
	}
	switch r, n := utf8.DecodeRuneInString(fold); {
	case fold == "":
		in.fold = 0
	case n == len(fold) && r != utf8.RuneError:
		in.fold = r
	default:
		return in, fmt.Errorf("folds to %q, not to one code point", fold)
	}
	return in, nil
}
