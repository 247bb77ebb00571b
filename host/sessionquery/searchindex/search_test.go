package searchindex

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

func TestLiveSessionHitCarriesItsFullHeaderAndSnippet(t *testing.T) {
	f := newFixture(t)
	h := hdr("s1", 10)
	h.SeedLength = session.Ptr(0)
	h.DelegationDepth = session.Ptr(1)
	h.AgentPreset = session.Ptr("coder")
	f.live(h, texts("An AI helper", "BRAID of rope"))
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "AI"})
	if len(p.Items) != 1 {
		t.Fatalf("items = %+v", p.Items)
	}
	got := p.Items[0]
	if !reflect.DeepEqual(got.Header, h) || !got.Live || got.Persisted {
		t.Errorf("hit record = %+v", got.SessionRecord)
	}
	if got.BestMatch.Snippet != "An AI helper" || got.BestMatch.Seq != 0 || got.BestMatch.Surface != "current" {
		t.Errorf("best match = %+v", got.BestMatch)
	}
}

func TestPersistedAndLiveSessionsAreBothFound(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("old", 1), texts("we fixed req-4f3a-91 yesterday", "ok"))
	f.live(hdr("new", 2), texts("is req-4f3a-91 still failing?", "no"))
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "req-4f3a-91"})
	if got := sessionIDs(p); !reflect.DeepEqual(got, []string{"new", "old"}) && !reflect.DeepEqual(got, []string{"old", "new"}) {
		t.Fatalf("sessions = %v", got)
	}
	for _, it := range p.Items {
		if it.Header.ID == "old" && (it.Live || !it.Persisted) {
			t.Errorf("old = %+v", it.SessionRecord)
		}
	}
	e := f.events(sessionquery.EventSearchRequest{SessionID: "old", Query: "yesterday"})
	if !reflect.DeepEqual(seqs(e), []int{0}) || e.Session.ID != "old" {
		t.Errorf("event page = %+v", e)
	}
}

func TestReasoningIsNotIndexedButVisibleTextIs(t *testing.T) {
	f := newFixture(t)
	msg := assistantMsg("visible words")
	msg.Message.Content = append([]session.ContentBlock{session.ReasoningBlock("secret thoughts")}, msg.Message.Content...)
	f.live(hdr("s", 1), []session.Event{ev(0, session.TypeAssistantMessage, msg)})
	if p := f.sessions(sessionquery.SessionSearchRequest{Query: "secret"}); len(p.Items) != 0 {
		t.Errorf("reasoning matched: %+v", p.Items)
	}
	if p := f.sessions(sessionquery.SessionSearchRequest{Query: "visible"}); len(p.Items) != 1 {
		t.Errorf("visible text did not match: %+v", p.Items)
	}
}

// surfaceLog is [user "needle one" (shadowed), chunk, assistant replacing
// it "needle two", turn/end interrupted]: one event per surface class.
func surfaceLog() []session.Event {
	return []session.Event{
		ev(0, session.TypeUserMessage, userMsg("needle one")),
		ev(1, session.TypeAssistantChunk, session.AssistantChunk{Chunk: []byte(`{"type":"text-delta","text":"needle"}`)}),
		ev(2, session.TypeAssistantMessage, assistantMsg("needle two"), session.WithSurface(session.OpReplace(0, 0)), session.WithSources(0)),
		ev(3, session.TypeTodoWrite, session.TodoWrite{Todos: []session.Todo{{Content: "needle three", Status: "pending"}}}),
	}
}

func TestAllSurfacesAreSearchableAndFiltersNarrowBeforeRanking(t *testing.T) {
	f := newFixture(t)
	f.live(hdr("s", 5), surfaceLog())
	all := f.events(sessionquery.EventSearchRequest{SessionID: "s", Query: "needle"})
	surfaces := map[string]int{}
	for _, h := range all.Items {
		surfaces[h.Surface] = h.Seq
	}
	if !reflect.DeepEqual(surfaces, map[string]int{"shadowed": 0, "current": 2, "log-only": 3}) {
		t.Fatalf("surfaces = %v (%+v)", surfaces, all.Items)
	}
	tests := []struct {
		name    string
		filters []sessionquery.EventFilter
		want    []int
	}{
		{"seq", []sessionquery.EventFilter{{Kind: "seq", From: floatp(1), To: floatp(2)}}, []int{2}},
		{"time", []sessionquery.EventFilter{{Kind: "time", To: floatp(1_700_000_000_000)}}, []int{0}},
		{"type", []sessionquery.EventFilter{{Kind: "type", Values: []string{"todo/write"}}}, []int{3}},
		{"surface", []sessionquery.EventFilter{{Kind: "surface", Values: []string{"shadowed"}}}, []int{0}},
		{"empty surface", []sessionquery.EventFilter{{Kind: "surface", Values: []string{}}}, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := f.events(sessionquery.EventSearchRequest{SessionID: "s", Query: "needle", Filters: tt.filters})
			if got := seqs(p); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("seqs = %v, want %v", got, tt.want)
			}
			s := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", EventFilters: tt.filters})
			if len(tt.want) == 0 {
				if len(s.Items) != 0 {
					t.Errorf("session hits = %+v", s.Items)
				}
				return
			}
			if len(s.Items) != 1 || s.Items[0].BestMatch.Seq != tt.want[0] {
				t.Errorf("session best match = %+v, want seq %d", s.Items, tt.want[0])
			}
		})
	}
	best := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", EventFilters: []sessionquery.EventFilter{{Kind: "surface", Values: []string{"shadowed"}}}})
	if got := best.Items[0].BestMatch; got.Seq != 0 || got.Surface != "shadowed" {
		t.Errorf("best match = %+v, want seq 0 shadowed", got)
	}
}

func TestSessionFiltersNarrowTheCorpus(t *testing.T) {
	f := newFixture(t)
	child := hdr("child", 20)
	child.ParentSession = session.Ptr("root")
	other := hdr("elsewhere", 30)
	other.Cwd = session.Ptr("/other")
	f.persist(hdr("root", 10), texts("needle in root"))
	f.persist(child, texts("needle in child"))
	f.live(other, texts("needle elsewhere"))
	tests := []struct {
		name    string
		filters []sessionquery.SessionFilter
		want    []string
	}{
		{"id", []sessionquery.SessionFilter{{Kind: "id", Values: []string{"root", "elsewhere"}}}, []string{"elsewhere", "root"}},
		{"cwd", []sessionquery.SessionFilter{{Kind: "cwd", NullableValues: nullable(strp("/w"))}}, []string{"child", "root"}},
		{"created-at", []sessionquery.SessionFilter{{Kind: "created-at", From: floatp(15), To: floatp(25)}}, []string{"child"}},
		{"parent root", []sessionquery.SessionFilter{{Kind: "parent", NullableValues: nullable(nil)}}, []string{"elsewhere", "root"}},
		{"parent", []sessionquery.SessionFilter{{Kind: "parent", NullableValues: nullable(strp("root"))}}, []string{"child"}},
		{"live", []sessionquery.SessionFilter{{Kind: "availability", Values: []string{"live"}}}, []string{"elsewhere"}},
		{"persisted", []sessionquery.SessionFilter{{Kind: "availability", Values: []string{"persisted"}}}, []string{"child", "root"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle", SessionFilters: tt.filters}))
			slices.Sort(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sessions = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPredicateBudgetsAtTheBoundary(t *testing.T) {
	f := newFixture(t)
	f.live(hdr("s", 1), texts("needle"))
	ids := func(n int) []sessionquery.SessionFilter {
		out := make([]sessionquery.SessionFilter, n)
		for i := range out {
			out[i] = sessionquery.SessionFilter{Kind: "id", Values: []string{"s"}}
		}
		return out
	}
	types := func(n int) []sessionquery.EventFilter {
		out := make([]sessionquery.EventFilter, n)
		for i := range out {
			out[i] = sessionquery.EventFilter{Kind: "type", Values: []string{"user/message"}}
		}
		return out
	}
	if p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", SessionFilters: ids(14)}); len(p.Items) != 1 {
		t.Errorf("14 session predicates: %+v", p.Items)
	}
	if p := f.events(sessionquery.EventSearchRequest{SessionID: "s", Query: "needle", Filters: types(13)}); len(p.Items) != 1 {
		t.Errorf("13 event predicates: %+v", p.Items)
	}
	ctx := context.Background()
	for name, req := range map[string]sessionquery.SessionSearchRequest{
		"1100":  {Query: "needle", SessionFilters: ids(1100)},
		"7 + 8": {Query: "needle", SessionFilters: ids(7), EventFilters: types(8)},
	} {
		_, err := f.ix.SearchSessions(ctx, req)
		if qe := wantCode(t, err, sessionquery.CodeInvalidFilter); qe.Message != msgPredicates {
			t.Errorf("%s: %q", name, qe.Message)
		}
	}
	_, err := f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "s", Query: "needle", Filters: types(14)})
	wantCode(t, err, sessionquery.CodeInvalidFilter)
	half := make([]string, 16383)
	for i := range half {
		half[i] = "v"
	}
	_, err = f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle",
		SessionFilters: []sessionquery.SessionFilter{{Kind: "id", Values: half}},
		EventFilters:   []sessionquery.EventFilter{{Kind: "type", Values: half}}})
	if qe := wantCode(t, err, sessionquery.CodeInvalidFilter); qe.Message != msgBindings {
		t.Errorf("bindings: %q", qe.Message)
	}
	huge := make([]string, 125000)
	for i := range huge {
		huge[i] = "v"
	}
	_, err = f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle", SessionFilters: []sessionquery.SessionFilter{{Kind: "id", Values: huge}}})
	wantCode(t, err, sessionquery.CodeInvalidFilter)
}

func TestPhraseRankingTokensAndQueryAsData(t *testing.T) {
	f := newFixture(t)
	f.live(hdr("a", 1), texts("😀😀 alpha beta BRAID 😀😀"))
	f.live(hdr("b", 1), texts("alpha beta"))
	f.live(hdr("c", 1), texts("alpha middle beta"))
	f.live(hdr("d", 1), texts("alpha beta"))
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "alpha beta", Limit: intp(10)})
	if got := sessionIDs(p); !reflect.DeepEqual(got, []string{"b", "d", "a"}) {
		t.Errorf("phrase order = %v, want [b d a]", got)
	}
	f2 := newFixture(t, func(c *Config) { c.SnippetChars = 5 })
	f2.live(hdr("a", 1), texts("😀😀 alpha beta BRAID 😀😀"))
	for _, it := range f2.sessions(sessionquery.SessionSearchRequest{Query: "alpha beta"}).Items {
		if n := utf8.RuneCountInString(it.BestMatch.Snippet); n > 5 {
			t.Errorf("snippet %q has %d code points", it.BestMatch.Snippet, n)
		}
	}
	if p := f.sessions(sessionquery.SessionSearchRequest{Query: "AI"}); len(p.Items) != 0 {
		t.Errorf("AI matched BRAID: %+v", p.Items)
	}
	lit := newFixture(t)
	lit.live(hdr("ops", 1), texts(`please say "needle" OR absent and needle OR absent`))
	lit.live(hdr("plain", 1), texts("needle alone"))
	for _, q := range []string{"needle OR absent", `say "needle"`} {
		if got := sessionIDs(lit.sessions(sessionquery.SessionSearchRequest{Query: q})); !reflect.DeepEqual(got, []string{"ops"}) {
			t.Errorf("%q matched %v, want only the literal text", q, got)
		}
	}
	for _, q := range []string{"*", "say \"needle\" OR *", "NEAR(needle absent)", "needle*", "(", "\""} {
		if _, err := lit.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: q}); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	if p := lit.sessions(sessionquery.SessionSearchRequest{Query: "*"}); len(p.Items) != 0 {
		t.Errorf("* matched %+v", p.Items)
	}
}

func TestLiveAndPersistedCandidatesRankOnOneScale(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("z-persisted", 1), texts("needle needle"))
	f.persist(hdr("filler", 1), texts("needle in a much longer haystack of many other words that dilute it", "and more words", "unrelated text"))
	f.live(hdr("a-live", 1), texts("needle needle"))
	got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))
	if !reflect.DeepEqual(got, []string{"a-live", "z-persisted", "filler"}) {
		t.Errorf("order = %v, want [a-live z-persisted filler]", got)
	}
	// The same documents the other way round: the tie breaks on the id.
	g := newFixture(t)
	g.persist(hdr("a-persisted", 1), texts("needle needle"))
	g.live(hdr("z-live", 1), texts("needle needle"))
	g.live(hdr("long-live", 1), texts("needle and a long tail of words that makes it weaker"))
	got = sessionIDs(g.sessions(sessionquery.SessionSearchRequest{Query: "needle"}))
	if !reflect.DeepEqual(got, []string{"a-persisted", "z-live", "long-live"}) {
		t.Errorf("order = %v, want [a-persisted z-live long-live]", got)
	}
}

// The persisted ranking's own count of matching documents (several per
// session here) is the bm25 statistic the live scores are rescaled with:
// identical live and persisted documents tie, so the session id decides,
// whichever side holds the smaller id.
func TestLiveScoresRescaleWithThePersistedRankingsMatchCount(t *testing.T) {
	for _, tc := range []struct{ live, persisted string }{{"a-live", "z-persisted"}, {"z-live", "a-persisted"}} {
		f := newFixture(t)
		f.persist(hdr(tc.persisted, 1), texts("needle needle"))
		for i := range 3 {
			f.persist(hdr(fmt.Sprintf("many-%d", i), 1), texts("needle one", "needle two and some words", "no match here", "needle three in a longer sentence than the others"))
		}
		// Enough other documents that the word is rare and its idf is not
		// clamped: then any other count would break the tie.
		f.persist(hdr("none", 1), texts(slices.Repeat([]string{"nothing to see"}, 40)...))
		f.live(hdr(tc.live, 1), texts("needle needle", "needle and a weaker tail of several words"))
		got := sessionIDs(f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(2)}))
		want := []string{tc.live, tc.persisted}
		if tc.persisted < tc.live {
			want = []string{tc.persisted, tc.live}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("order = %v, want %v (identical documents must tie)", got, want)
		}
	}
}

func TestDiacriticsCJKAndHyphenatedIDs(t *testing.T) {
	f := newFixture(t)
	f.live(hdr("s", 1), texts("long long long—café,\nnext value", "我们 需要 搜索 功能", "request req-4f3a-91 failed", "RÉSUMÉ naïve"))
	f2 := newFixture(t, func(c *Config) { c.SnippetChars = 14 })
	f2.live(hdr("s", 1), texts("long long long—café,\nnext value"))
	p := f2.sessions(sessionquery.SessionSearchRequest{Query: "CAFE"})
	if len(p.Items) != 1 {
		t.Fatalf("CAFE: %+v", p.Items)
	}
	snip := p.Items[0].BestMatch.Snippet
	if !strings.Contains(snip, "café") || !strings.Contains(snip, "—") || strings.Contains(snip, "\n") || utf8.RuneCountInString(snip) > 14 {
		t.Errorf("snippet = %q", snip)
	}
	tests := []struct {
		q   string
		seq []int
	}{
		{"搜索", []int{1}},
		{"req-4f3a-91", []int{2}},
		{"4f3a", []int{2}},
		{"req 4f3a 91", []int{2}},
		{"resume", []int{3}},
		{"NAIVE", []int{3}},
		{"café", []int{0}},
		{"req-4f3a-92", []int{}},
	}
	for _, tt := range tests {
		if got := seqs(f.events(sessionquery.EventSearchRequest{SessionID: "s", Query: tt.q})); !reflect.DeepEqual(got, tt.seq) {
			t.Errorf("%q matched %v, want %v", tt.q, got, tt.seq)
		}
	}
}

func TestLargeAndHostileQueriesAreData(t *testing.T) {
	f := newFixture(t)
	f.live(hdr("s", 1), texts("needle \uFFFD marker"))
	ctx := context.Background()
	big := strings.Repeat("needle ", 150_000) // about 1 MB
	_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: big})
	wantCode(t, err, sessionquery.CodeInvalidQuery)
	atLimit := strings.Repeat("x", MaxQueryBytes)
	if _, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: atLimit}); err != nil {
		t.Errorf("a query of exactly MaxQueryBytes: %v", err)
	}
	_, err = f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "a\x00b"})
	wantCode(t, err, sessionquery.CodeInvalidQuery)
	// A lone surrogate decoded from JSON arrives as U+FFFD; so do the
	// highlight markers, which can therefore never be forged.
	for _, q := range []string{"\uFFFD marker", "\uFDD0 marker"} {
		p := f.sessions(sessionquery.SessionSearchRequest{Query: q})
		if len(p.Items) != 1 || strings.ContainsAny(p.Items[0].BestMatch.Snippet, "\uFDD0\uFDD1") {
			t.Errorf("%q: %+v", q, p.Items)
		}
	}
}

func TestInvalidRequestsAreRejected(t *testing.T) {
	f := newFixture(t)
	f.live(hdr("s", 1), texts("needle"))
	ctx := context.Background()
	cases := []struct {
		name string
		run  func() error
		code string
	}{
		{"empty query", func() error {
			_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: " "})
			return err
		}, sessionquery.CodeInvalidQuery},
		{"limit 0", func() error {
			_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "a", Limit: intp(0)})
			return err
		}, sessionquery.CodeInvalidLimit},
		{"limit above max", func() error {
			_, err := f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "s", Query: "a", Limit: intp(101)})
			return err
		}, sessionquery.CodeInvalidLimit},
		{"reversed seq", func() error {
			_, err := f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "s", Query: "a", Filters: []sessionquery.EventFilter{{Kind: "seq", From: floatp(3), To: floatp(2)}}})
			return err
		}, sessionquery.CodeInvalidFilter},
		{"unknown availability", func() error {
			_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "a", SessionFilters: []sessionquery.SessionFilter{{Kind: "availability", Values: []string{"x"}}}})
			return err
		}, sessionquery.CodeInvalidFilter},
		{"unknown event kind", func() error {
			_, err := f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "s", Query: "a", Filters: []sessionquery.EventFilter{{Kind: "mood"}}})
			return err
		}, sessionquery.CodeInvalidFilter},
		{"bad cursor", func() error {
			_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "a", Cursor: strp("not-json")})
			return err
		}, sessionquery.CodeInvalidCursor},
		{"absent target", func() error {
			_, err := f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "nope", Query: "a"})
			return err
		}, sessionquery.CodeSessionNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantCode(t, c.run(), c.code) })
	}
}

func TestQueuedRequestKeepsTheValuesItHadWhenQueued(t *testing.T) {
	f := newFixture(t)
	f.live(hdr("s", 1), texts("needle"))
	f.live(hdr("t", 1), texts("needle"))
	ctx := context.Background()
	if err := f.ix.Open(ctx); err != nil {
		t.Fatal(err)
	}
	queued := watchQueue(f.ix)
	// Hold the queue so the search below waits in it.
	if err := f.ix.queue.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	req := sessionquery.SessionSearchRequest{Query: "needle", SessionFilters: []sessionquery.SessionFilter{{Kind: "id", Values: []string{"s"}}}}
	done := make(chan sessionquery.SessionSearchPage)
	go func() {
		p, err := f.ix.SearchSessions(ctx, req)
		if err != nil {
			t.Error(err)
		}
		done <- p
	}()
	waitQueued(t, queued, 1)
	req.Query = "other"
	req.SessionFilters[0].Values[0] = "t"
	f.ix.queue.release()
	if got := sessionIDs(<-done); !reflect.DeepEqual(got, []string{"s"}) {
		t.Errorf("sessions = %v, want [s]", got)
	}
}
