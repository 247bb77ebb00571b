package searchindex

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// CJK words and identifier parts are found through the whole index, and
// their snippets are the original text, for persisted and live sessions.
func TestCJKAndIdentifierPartsAreFound(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("zh", 1), texts("请检查数据库连接池配置", "好的"))
	f.persist(hdr("ja", 2), texts("データベースの接続を確認してください"))
	f.persist(hdr("ko", 3), texts("데이터베이스를 확인하세요"))
	f.persist(hdr("camel", 4), texts("the bug is in parseSessionHeader(ctx, raw)"))
	f.persist(hdr("snake", 5), texts("see session_header.go for parse_session_header"))
	f.persist(hdr("openai", 6), texts("the OpenAI client"))
	f.persist(hdr("braid", 7), texts("a BRAID and a category"))
	f.live(hdr("live", 8), texts("实时会话里的数据库迁移"))

	cases := []struct {
		query string
		want  []string // session ids, in any order
	}{
		{"数据库", []string{"zh", "live"}},
		{"连接池", []string{"zh"}},
		{"sqlite 数据库", nil},
		{"データベース", []string{"ja"}},
		{"接続を確認", []string{"ja"}},
		{"데이터베이스", []string{"ko"}},
		{"SessionHeader", []string{"camel", "snake"}},
		{"session header", []string{"camel", "snake"}},
		{"parseSessionHeader", []string{"camel", "snake"}},
		{"parsesessionheader", []string{"camel"}},
		{"header.go", []string{"snake"}},
		{"AI", []string{"openai"}},
		{"cat", nil},
	}
	for _, c := range cases {
		p := f.sessions(sessionquery.SessionSearchRequest{Query: c.query})
		got := sessionIDs(p)
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q found %v, want %v", c.query, got, want)
		}
		for _, it := range p.Items {
			if strings.Contains(it.BestMatch.Snippet, "\uE000") || strings.Contains(it.BestMatch.Snippet, "数 据") {
				t.Errorf("%q in %s: the snippet %q shows the indexed form", c.query, it.Header.ID, it.BestMatch.Snippet)
			}
		}
	}

	p := f.events(sessionquery.EventSearchRequest{SessionID: "zh", Query: "数据库"})
	if len(p.Items) != 1 || p.Items[0].Snippet != "请检查数据库连接池配置" {
		t.Errorf("events of zh: %+v", p.Items)
	}
	p = f.events(sessionquery.EventSearchRequest{SessionID: "live", Query: "数据库"})
	if len(p.Items) != 1 || p.Items[0].Snippet != "实时会话里的数据库迁移" {
		t.Errorf("events of the live session: %+v", p.Items)
	}
}

// A snippet is cut around the CJK or identifier-part match, counted in the
// original text's code points.
func TestSnippetsAreCutAroundCJKAndPartMatches(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.SnippetChars = 9 })
	f.persist(hdr("zh", 1), texts("一二三四五六七八九十请检查数据库连接池配置"))
	f.persist(hdr("camel", 2), texts("one two three four five parseSessionHeader six"))
	// Long enough to be probed window by window.
	long := strings.Repeat("无关的文字，", 2000) + "数据库迁移" + strings.Repeat("，后面的文字", 100)
	f.persist(hdr("long", 3), texts(long))

	for _, c := range []struct{ id, query, want string }{
		// A third of the limit before the match (session-query.md §3.12).
		{"zh", "数据库", "…请检查数据库连…"},
		{"camel", "header", "…ionHead…"},
		{"long", "数据库", "…文字，数据库迁…"},
	} {
		p := f.events(sessionquery.EventSearchRequest{SessionID: c.id, Query: c.query})
		if len(p.Items) != 1 || p.Items[0].Snippet != c.want {
			t.Errorf("%q in %s: %+v, want the snippet %q", c.query, c.id, p.Items, c.want)
		}
	}
}

// An index whose text form predates CJK and identifier tokens is rebuilt
// when opened, with one notice, and never searched in the old form.
func TestAnIndexOfTheOldTextFormIsRebuilt(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("a", 1), texts("请检查数据库连接 and parseSessionHeader"))
	f.sessions(sessionquery.SessionSearchRequest{Query: "数据库"})
	// Re-tokenize the stored text as the previous version did: whole runs.
	f.exec(`INSERT INTO persisted_fts(persisted_fts) VALUES ('rebuild')`)
	f.exec(`UPDATE search_state SET text_form = 1`)
	if n := f.count(`SELECT count(*) FROM persisted_fts WHERE persisted_fts MATCH '"数 据 库"'`); n != 0 {
		t.Fatalf("the simulated old index already finds the word (%d)", n)
	}
	f.ix.Close()
	var notices []string
	ix, err := New(f.cfg, f.svc, Options{Notice: func(m string) { notices = append(notices, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []string{"数据库", "SessionHeader"} {
		p, err := ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: q})
		if err != nil || len(p.Items) != 1 {
			t.Errorf("%q after the migration: %v, %v", q, sessionIDs(p), err)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "rebuilding it from the session logs") {
		t.Errorf("notices = %q", notices)
	}
}

// A camel-case query is its parts OR its whole: the identifier is found
// however a document cases it, and a document holding it exactly ranks
// before those holding only its parts as words or in snake case.
func TestAWholeIdentifierRanksFirst(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("a-prose", 1), texts("call parse session header now"))
	f.persist(hdr("b-snake", 2), texts("call parse_session_header now"))
	f.persist(hdr("c-exact", 3), texts("call parseSessionHeader now"))
	f.persist(hdr("d-lower", 4), texts("call parsesessionheader now"))
	// A history where the words are not everywhere, so that bm25's idf
	// means what it does on a real one.
	for i := range 20 {
		f.persist(hdr(fmt.Sprintf("filler-%02d", i), 5), texts("unrelated text about nothing"))
	}
	got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "parseSessionHeader"}))
	if len(got) != 4 || got[0] != "c-exact" {
		t.Errorf("parseSessionHeader ranked %v, want c-exact first of four", got)
	}
	got = sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "PARSESESSIONHEADER"}))
	slices.Sort(got)
	if !slices.Equal(got, []string{"c-exact", "d-lower"}) {
		t.Errorf("the whole identifier in capitals found %v", got)
	}
	f.persist(hdr("f-openai", 6), texts("see api.openai.com"))
	f.persist(hdr("g-OpenAI", 7), texts("the OpenAI API"))
	got = sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "OpenAI"}))
	if len(got) != 2 || got[0] != "g-OpenAI" {
		t.Errorf("OpenAI found %v, want g-OpenAI, then f-openai", got)
	}
}

// Live documents of a two-phrase query are scored as if they were in the
// persisted table: identical documents tie exactly, whichever table holds
// them, and fall to the session id.
func TestLiveAndPersistedTieOnAnIdentifierQuery(t *testing.T) {
	f := newFixture(t)
	doc := "the handler calls parseSessionHeader twice"
	f.persist(hdr("b", 1), texts(doc))
	f.persist(hdr("c", 1), texts(doc))
	f.persist(hdr("x", 1), texts("some other parse session header text that is longer than the rest"))
	f.live(hdr("a", 1), texts(doc))
	f.live(hdr("d", 1), texts(doc))
	got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "parseSessionHeader"}))
	if !slices.Equal(got, []string{"a", "b", "c", "d", "x"}) {
		t.Errorf("ranked %v, want the four identical documents tied in id order, then x", got)
	}
}
