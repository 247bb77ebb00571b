package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/searchtext"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// querySeeds are hostile and ordinary queries both fuzz targets start from.
var querySeeds = []string{
	"needle", `"`, `a "b" c`, "a OR b", "NEAR(a b, 2)", "NEAR(", "*", "a*", "^a", "-a", "col:a",
	"{a b}: c", "(a", "a\x00b", " \t\u00a0\u2028 ", "\uFDD0a\uFDD1", "\xed\xa0\x80", "\xff\xfe",
	"İstanbul", "café CAFE", "req-4f3a-91", "搜索 结果", "parseSessionHeader", `say "fooBar" OR x`, "OpenAI 数据库", "a\u200bb", "\U0001F600 smile", strings.Repeat("x", 4096),
}

// FuzzNormalizeQuery checks the query normalizer and the FTS5 quoting on
// arbitrary text: only blank or NUL-carrying text is refused, with
// INVALID_QUERY; what is kept is valid UTF-8 without highlight markers,
// trimmed and collapsed; and the quoted form is exactly one FTS5 string
// per form of the query (a quote, then the form with every quote doubled,
// then a quote; two forms are joined by OR), so no operator, star or
// parenthesis inside it can act.
func FuzzNormalizeQuery(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got, ok := normalizedOrRefused(t, q)
		if !ok {
			return
		}
		quoted := quoteFTS(got)
		phrases := matchPhrases(quoted)
		forms := []string{searchtext.Query(got)}
		if w := searchtext.Whole(got); w != forms[0] {
			forms = append(forms, w)
		}
		if len(phrases) != len(forms) || strings.Join(phrases, " OR ") != quoted {
			t.Fatalf("quoteFTS(%q) = %s is not %d strings", got, quoted, len(forms))
		}
		for i, ph := range phrases {
			if len(ph) < 2 || ph[0] != '"' || ph[len(ph)-1] != '"' {
				t.Fatalf("quoteFTS(%q) = %s: %s is not one string", got, quoted, ph)
			}
			inner, form := ph[1:len(ph)-1], forms[i]
			if strings.ReplaceAll(inner, `""`, "") != strings.ReplaceAll(form, `"`, "") || strings.Count(inner, `"`) != 2*strings.Count(form, `"`) {
				t.Fatalf("quoteFTS(%q) = %s leaves a quote undoubled", got, quoted)
			}
		}
	})
}

// FuzzQuotedQueryMatches sends the quoted query to a real FTS5 table with
// the index's tokenizer: it is never a syntax error, and it finds a
// document holding the same text (indexed in its form, as the index does)
// exactly when SQLite made a token of it.
// (Slow under the fuzzer's instrumentation of SQLite: tens of executions
// per second.)
func FuzzQuotedQueryMatches(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{
		`CREATE VIRTUAL TABLE t USING fts5(text, tokenize='` + tokenizer + `')`,
		// The tokens SQLite itself produced, per document.
		`CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		got, ok := normalizedOrRefused(t, q)
		if !ok {
			return
		}
		ctx := context.Background()
		res, err := db.ExecContext(ctx, `INSERT INTO t(text) VALUES (?)`, searchtext.Segment(got).Text)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		defer db.ExecContext(ctx, `DELETE FROM t WHERE rowid = ?`, id)
		var hits int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE t MATCH ?`, quoteFTS(got)).Scan(&hits); err != nil {
			t.Fatalf("MATCH %s: %v", quoteFTS(got), err)
		}
		var found, tokens int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE t MATCH ? AND rowid = ?`, quoteFTS(got), id).Scan(&found); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM v WHERE doc = ?`, id).Scan(&tokens); err != nil {
			t.Fatal(err)
		}
		if found == 0 && tokens > 0 {
			t.Fatalf("the phrase %s does not find a document holding %q (%d tokens)", quoteFTS(got), got, tokens)
		}
		if found > 0 && tokens == 0 {
			t.Fatalf("the phrase %s of no token found %q", quoteFTS(got), got)
		}
	})
}

// normalizedOrRefused runs normalizeQuery and checks its contract; ok is
// false when the query was (rightly) refused.
func normalizedOrRefused(t *testing.T, q string) (string, bool) {
	t.Helper()
	got, err := normalizeQuery(q)
	if err != nil {
		var qe *sessionquery.Error
		if !errors.As(err, &qe) || qe.Code != sessionquery.CodeInvalidQuery {
			t.Fatalf("normalizeQuery(%q): untyped error %v", q, err)
		}
		if sessionquery.CollapseJS(strings.ToValidUTF8(q, "\uFFFD")) != "" && !strings.ContainsRune(q, 0) {
			t.Fatalf("normalizeQuery(%q) refused a query with text and no NUL: %v", q, err)
		}
		return "", false
	}
	switch {
	case !utf8.ValidString(got):
		t.Fatalf("normalizeQuery(%q) = %q is not valid UTF-8", q, got)
	case strings.ContainsAny(got, "\uFDD0\uFDD1\x00"):
		t.Fatalf("normalizeQuery(%q) = %q keeps a marker or NUL", q, got)
	case got == "" || got != sessionquery.CollapseJS(got):
		t.Fatalf("normalizeQuery(%q) = %q is not trimmed and collapsed", q, got)
	}
	return got, true
}
