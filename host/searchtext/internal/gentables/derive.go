package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/internal/ftsoracle"
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

// tokenizer is searchtext.Tokenizer, which this generator cannot import:
// it must build while the tables it writes are missing or wrong.
const tokenizer = `unicode61 remove_diacritics 2`

// tokens returns the terms FTS5 stores for text, by position, as many as
// the document size it records; a position without a term is "".
func tokens(ctx context.Context, x *ftsoracle.Oracle, text string) ([]string, error) {
	sizes, err := x.Index(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	terms, err := x.Terms(ctx, sizes, "")
	if err != nil {
		return nil, err
	}
	return terms[0], nil
}

// derive asks FTS5 about every scalar value c, indexed by c (a surrogate
// is a separator, as FTS5 reads it as U+FFFD): "a<c>b" is one token if c
// is a token character, and then holds what c folds to, and two tokens
// otherwise; c alone between markers is a token if c can start one.
func derive(ctx context.Context, x *ftsoracle.Oracle) ([]info, error) {
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
		toks, err := tokens(ctx, x, b.String())
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
