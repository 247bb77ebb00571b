package searchtext

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/internal/ftsoracle"
)

const (
	markStart = '\uFDD0'
	markEnd   = '\uFDD1'
)

// fts is a one-document FTS5 table with the index's tokenizer
// (internal/ftsoracle), so the tests check what SQLite itself makes of the
// forms, not a model of it.
type fts struct {
	t testing.TB
	o *ftsoracle.Oracle
}

func newFTS(t testing.TB) *fts {
	t.Helper()
	o, err := ftsoracle.Open(context.Background(), Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return &fts{t: t, o: o}
}

// highlight indexes doc's form and returns the original doc with the
// matches of query marked, and whether it matched at all.
func (f *fts) highlight(doc, query string) (string, bool) {
	f.t.Helper()
	ctx := context.Background()
	form := Segment(doc)
	if _, err := f.o.Index(ctx, []string{form.Text}); err != nil {
		f.t.Fatal(err)
	}
	q := Query(query)
	marked, matched, err := f.o.Highlight(ctx, `"`+strings.ReplaceAll(q, `"`, `""`)+`"`, string(markStart), string(markEnd))
	if err != nil {
		f.t.Fatalf("match %q in %q: %v", query, doc, err)
	}
	if !matched {
		if at, ok := form.FirstMatch([]string{q}); ok {
			f.t.Fatalf("%q in %q: FirstMatch finds a match at %d, FTS5 none", query, doc, at)
		}
		return doc, false
	}
	restored := form.Restore(marked, markStart, markEnd)
	// FirstMatch finds the first match where FTS5 highlights it.
	if at, ok := form.FirstMatch([]string{q}); !ok || at != strings.IndexRune(restored, markStart) {
		f.t.Fatalf("%q in %q: FirstMatch says %d (%v), FTS5 highlights %q", query, doc, at, ok, restored)
	}
	return restored, true
}

func (f *fts) matches(doc, query string) bool {
	_, ok := f.highlight(doc, query)
	return ok
}

func TestSegmentLeavesPlainTextAlone(t *testing.T) {
	for _, s := range []string{"", "An AI helper", "BRAID", "req-4f3a-91", "café — x", "parse_session_header", "IDs and URLs", "already spaced 数 据"} {
		f := Segment(s)
		if f.Text != s || f.Changed() {
			t.Errorf("Segment(%q) = %q, want it unchanged", s, f.Text)
		}
	}
}

func TestSegmentForms(t *testing.T) {
	cases := []struct{ in, want string }{
		{"请检查数据库连接", "请 检 查 数 据 库 连 接"},
		{"sqlite数据库", "sqlite 数 据 库"},
		{"parseSessionHeader", "parse Session Header \uE000 parseSessionHeader"},
		{"HTTPServer up", "HTTP Server up \uE000 HTTPServer"},
		{"OpenAI and BRAID", "Open AI and BRAID \uE000 OpenAI"},
		{"データベースを", "デ ー タ ベ ー ス を"},
		{"데이터베이스를 확인", "데 이 터 베 이 스 를 확 인"},
	}
	for _, c := range cases {
		if got := Segment(c.in).Text; got != c.want {
			t.Errorf("Segment(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Query("parseSessionHeader \uE000 x"); got != "parse Session Header   x" {
		t.Errorf("Query dropped no sentinel or kept the appended identifiers: %q", got)
	}
	for q, want := range map[string]string{"OpenAI 数据库": "OpenAI 数 据 库", "parseSessionHeader\uE000": "parseSessionHeader ", "plain words": "plain words"} {
		if got := Whole(q); got != want {
			t.Errorf("Whole(%q) = %q, want %q", q, got, want)
		}
	}
}

// The design's tokenizer acceptance cases (session-query.md §3.11) hold
// with the new form.
func TestDesignTokenCases(t *testing.T) {
	f := newFTS(t)
	cases := []struct {
		doc, query string
		want       bool
	}{
		{"An AI helper", "AI", true},
		{"BRAID", "AI", false},
		{"😀😀 alpha beta BRAID 😀😀", "AI", false},
		{"long long long—café,\nnext value", "CAFE", true},
		{"alpha beta", "alpha beta", true},
		{"alpha middle beta", "alpha beta", false},
		{"req-4f3a-91", "req 4f3a 91", true},
		{"say needle", `say "needle"`, true},
		{"needle", "needle OR absent", false},
		{"category", "cat", false},
		{"a cat sat", "cat", true},
	}
	for _, c := range cases {
		if got := f.matches(c.doc, c.query); got != c.want {
			t.Errorf("%q in %q: matched %v, want %v", c.query, c.doc, got, c.want)
		}
	}
}

func TestCJKAndIdentifierMatches(t *testing.T) {
	f := newFTS(t)
	cases := []struct {
		name, doc, query string
		want             string // the doc with [ ] around the highlight; "" for no match
	}{
		{"han word in a run", "请检查数据库连接池配置", "数据库", "请检查[数据库]连接池配置"},
		{"han single character", "请检查数据库连接池配置", "池", "请检查数据库连接[池]配置"},
		{"han whole run", "数据库", "数据库", "[数据库]"},
		{"han split by other text", "数据和库", "数据库", ""},
		{"han order matters", "库据数", "数据库", ""},
		{"mixed query", "用 sqlite 数据库配置 文件", "sqlite 数据库 配置", "用 [sqlite 数据库配置] 文件"},
		{"han next to latin", "打开sqlite数据库", "sqlite数据", "打开[sqlite数据]库"},
		{"japanese kana and kanji", "データベースの接続を確認してください", "接続を確認", "データベースの[接続を確認]してください"},
		{"katakana word", "データベースの接続", "データベース", "[データベース]の接続"},
		{"korean word with a particle", "데이터베이스를 확인하세요", "데이터베이스", "[데이터베이스]를 확인하세요"},
		{"camel part", "call parseSessionHeader(ctx)", "SessionHeader", "call parse[SessionHeader](ctx)"},
		{"camel parts spaced", "call parseSessionHeader(ctx)", "session header", "call parse[SessionHeader](ctx)"},
		{"camel last part", "call parseSessionHeader(ctx)", "header", "call parseSession[Header](ctx)"},
		{"camel whole", "call parseSessionHeader(ctx)", "parseSessionHeader", "call [parseSessionHeader](ctx)"},
		{"camel whole lower case", "call parseSessionHeader(ctx)", "parsesessionheader", "call [parseSessionHeader](ctx)"},
		{"camel whole then next word", "call parseSessionHeader ctx", "parseSessionHeader ctx", "call [parseSessionHeader ctx]"},
		{"pascal part", "type ParseSessionHeader struct", "session header", "type Parse[SessionHeader] struct"},
		{"snake part", "parse_session_header()", "SessionHeader", "parse_[session_header]()"},
		{"snake whole", "parse_session_header()", "parse_session_header", "[parse_session_header]()"},
		{"kebab part", "parse-session-header", "session header", "parse-[session-header]"},
		{"dotted file name", "see session_header.go", "header.go", "see session_[header.go]"},
		{"dotted file name by camel", "see session_header.go", "sessionHeader", "see [session_header].go"},
		{"acronym then word", "new HTTPServer here", "server", "new HTTP[Server] here"},
		{"acronym alone", "new HTTPServer here", "HTTP", "new [HTTP]Server here"},
		{"AI is a part of OpenAI", "the OpenAI client", "AI", "the Open[AI] client"},
		{"AI is not in BRAID", "a BRAID", "AI", ""},
		{"AI is not in braid", "a braid", "AI", ""},
		{"cat is not in category", "category", "cat", ""},
		{"IDs stays whole", "the IDs", "Ds", ""},
		{"no phrase into the appended identifiers", "fooBar", "bar foobar", ""},
		{"no phrase between appended identifiers", "fooBar bazQux", "foobar bazqux", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := f.highlight(c.doc, c.query)
			got = strings.NewReplacer(string(markStart), "[", string(markEnd), "]").Replace(got)
			switch {
			case c.want == "" && ok:
				t.Errorf("%q matched %q: %s", c.query, c.doc, got)
			case c.want != "" && !ok:
				t.Errorf("%q did not match %q", c.query, c.doc)
			case ok && got != c.want:
				t.Errorf("%q in %q highlighted %q, want %q", c.query, c.doc, got, c.want)
			}
		})
	}
}

func TestOriginMapsFormOffsets(t *testing.T) {
	doc := "x 数据库 fooBar"
	f := Segment(doc)
	for i := 0; i <= f.main; i++ {
		o := f.Origin(i)
		if o < 0 || o > len(doc) {
			t.Fatalf("Origin(%d) = %d, out of range", i, o)
		}
		if i < f.main && f.Text[i] != ' ' && doc[o] != f.Text[i] {
			t.Errorf("Origin(%d) = %d: form byte %q, original byte %q", i, o, f.Text[i], doc[o])
		}
	}
	if at := strings.LastIndex(f.Text, "fooBar"); f.Origin(at+2) != strings.Index(doc, "fooBar") {
		t.Errorf("an offset in the appended identifier maps to %d, want the identifier at %d", f.Origin(at+2), strings.Index(doc, "fooBar"))
	}
}

func FuzzEverySubstringOfACJKRunIsFound(f *testing.F) {
	f.Add("请检查数据库连接池配置", "sqlite")
	f.Add("データベースの接続を確認", "x")
	f.Add("데이터베이스를확인", "parseHeader")
	f.Add("中文English混合日本語", "")
	db := newFTS(f)
	f.Fuzz(func(t *testing.T, run, around string) {
		var cjkRun []rune
		for _, r := range run {
			if classify(r) == cjk {
				cjkRun = append(cjkRun, r)
			}
		}
		// Documents are valid UTF-8 (they come from JSON); SQLite reads
		// stray continuation bytes into the character before them.
		if len(cjkRun) == 0 || len(cjkRun) > 12 || !utf8.ValidString(around) {
			return
		}
		doc := around + string(cjkRun) + around
		db.t = t
		for i := range cjkRun {
			for j := i + 1; j <= len(cjkRun); j++ {
				q := string(cjkRun[i:j])
				got, ok := db.highlight(doc, q)
				if !ok {
					t.Fatalf("%q not found in %q", q, doc)
				}
				if strings.NewReplacer(string(markStart), "", string(markEnd), "").Replace(got) != doc {
					t.Fatalf("highlight of %q in %q does not restore the document: %q", q, doc, got)
				}
				if !slices.Contains(spans(got), q) && !strings.Contains(strings.Join(spans(got), ""), q) {
					t.Fatalf("highlight of %q in %q marks %q", q, doc, spans(got))
				}
			}
		}
	})
}

// spans returns the highlighted pieces of marked.
func spans(marked string) []string {
	var out []string
	for {
		i := strings.IndexRune(marked, markStart)
		if i < 0 {
			return out
		}
		marked = marked[i+len(string(markStart)):]
		j := strings.IndexRune(marked, markEnd)
		if j < 0 {
			return append(out, marked)
		}
		out = append(out, marked[:j])
		marked = marked[j+len(string(markEnd)):]
	}
}
