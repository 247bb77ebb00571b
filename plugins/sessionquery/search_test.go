package sessionquery

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func strp(s string) *string { return &s }

func sessionHit(h session.Header, live, persisted bool, snippet string) sq.SessionHit {
	return sq.SessionHit{
		SessionRecord: sq.SessionRecord{Header: h, Live: live, Persisted: persisted},
		BestMatch: sq.EventHit{EventRecord: sq.EventRecord{SessionID: h.ID, Seq: 4, Type: session.TypeAssistantMessage,
			Time: 200, Surface: sq.SurfaceCurrent}, Snippet: snippet},
	}
}

type sessionPage struct {
	items []sq.SessionHit
	next  string // "" = last page
}

// sessionPages scripts a paged provider: the n-th request must carry the
// cursor the (n-1)-th page returned, and must never carry a limit.
func sessionPages(t *testing.T, pages ...sessionPage) func(context.Context, sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
	n := 0
	return func(_ context.Context, req sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
		if req.Limit != nil {
			t.Errorf("request %d carries a limit", n)
		}
		want := ""
		if n > 0 {
			want = pages[n-1].next
		}
		if got := deref(req.Cursor); got != want || (n == 0) != (req.Cursor == nil) {
			t.Errorf("request %d cursor = %v, want %q", n, req.Cursor, want)
		}
		if n >= len(pages) {
			t.Errorf("request %d beyond the scripted pages", n)
			return sq.SessionSearchPage{}, nil
		}
		p := pages[n]
		n++
		out := sq.SessionSearchPage{Items: p.items}
		if p.next != "" {
			out.NextCursor = strp(p.next)
		}
		return out, nil
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// exampleCorpus is the session_search example of session-query.md §4.4.1:
// a (titled Alpha, parent outside the workspace), b (Beta, a root), c (a
// third visible session that only proves the cap), x outside.
func exampleCorpus() *corpus {
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("a", 100, workspace, "hidden-parent"), "Alpha")
	c.add(hdr("b", 100, workspace, ""), "Beta")
	c.add(hdr("c", 100, workspace, ""), "Gamma")
	c.add(hdr("x", 100, elsewhere, ""), "Secret")
	c.add(hdr("hidden-parent", 50, elsewhere, ""), "")
	return c
}

func exampleHits(c *corpus) map[string]sq.SessionHit {
	h := func(id string) session.Header { x, _ := c.header(id); return x }
	return map[string]sq.SessionHit{
		"caller": sessionHit(h("caller"), true, false, "own"),
		"a":      sessionHit(h("a"), true, false, "first"),
		"b":      sessionHit(h("b"), true, true, "second"),
		"c":      sessionHit(h("c"), true, false, "third"),
		"x":      sessionHit(h("x"), true, false, "hidden hit"),
	}
}

const exampleSearchText = `Session search results (2):

1. Session a — Alpha
   Created: 1970-01-01T00:00:00.100Z
   Parent: [outside workspace]
   Availability: live
   Best match: seq 4 | assistant/message | current | 1970-01-01T00:00:00.200Z
   Snippet: first

2. Session b — Beta
   Created: 1970-01-01T00:00:00.100Z
   Parent: root
   Availability: live, persisted
   Best match: seq 4 | assistant/message | current | 1970-01-01T00:00:00.200Z
   Snippet: second

Result cap reached. Narrow the query or add filters to find additional matches.`

func TestSessionSearchPagesSkipsCallerAndHiddenHitsAndShowsTheCap(t *testing.T) {
	c := exampleCorpus()
	hits := exampleHits(c)
	f := newFake(t).serve(c)
	f.searchSessions = sessionPages(t,
		sessionPage{[]sq.SessionHit{hits["caller"], hits["a"]}, "c1"},
		sessionPage{[]sq.SessionHit{hits["x"], hits["b"]}, "c2"},
		sessionPage{[]sq.SessionHit{hits["c"]}, ""},
	)
	h := newHarness(t, f, Config{MaxSearchResults: 2})
	res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, `{"query":"needle"}`)
	expectText(t, res, exampleSearchText)
	mustNotContain(t, "output", outcomeOf(t, res).Text, "hidden-parent", "x —", "Secret", "c1", "c2", "caller")
	if n := f.count("SearchSessions"); n != 3 {
		t.Fatalf("%d pages requested, want 3", n)
	}
	titles := f.callsOf("ReadTitleSnapshots")
	if len(titles) != 1 || !slices.Equal(titles[0].arg.([]string), []string{"a", "b"}) {
		t.Fatalf("title batches = %+v", titles)
	}
	want := []string{"SearchSessions", "SearchSessions", "SearchSessions", "FilterSessions", "ReadTitleSnapshots"}
	if got := f.names(); !slices.Equal(got, want) {
		t.Fatalf("calls = %v, want %v", got, want)
	}
}

func TestNoCapLineWhenOnlyRejectedHitsRemainAfterTheCap(t *testing.T) {
	c := exampleCorpus()
	hits := exampleHits(c)
	f := newFake(t).serve(c)
	f.searchSessions = sessionPages(t,
		sessionPage{[]sq.SessionHit{hits["a"], hits["b"]}, "c1"},
		sessionPage{[]sq.SessionHit{hits["caller"], hits["x"]}, ""},
	)
	h := newHarness(t, f, Config{MaxSearchResults: 2})
	o := outcomeOf(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, `{"query":"needle"}`))
	if o.IsError || o.Text != exampleSearchText[:len(exampleSearchText)-len("\n\n"+capLine)] {
		t.Fatalf("output:\n%s", o.Text)
	}
}

func TestSessionSearchShowsVisibleParentsAndEveryAvailability(t *testing.T) {
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("parent", 2, workspace, ""), "")
	c.add(hdr("child-of-parent", 3, workspace, "parent"), "")
	c.add(hdr("child-of-caller", 4, workspace, "caller"), "")
	c.add(hdr("orphan", 5, workspace, "missing"), "")
	c.add(hdr("unavailable", 6, workspace, ""), "")
	f := newFake(t).serve(c)
	hit := func(id string, live, persisted bool) sq.SessionHit {
		x, _ := c.header(id)
		return sessionHit(x, live, persisted, id)
	}
	f.searchSessions = sessionPages(t, sessionPage{[]sq.SessionHit{
		hit("child-of-parent", true, true), hit("child-of-caller", false, true), hit("orphan", true, false), hit("unavailable", false, false),
	}, ""})
	h := newHarness(t, f, DefaultConfig())
	o := outcomeOf(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, `{"query":"q"}`))
	for _, want := range []string{
		"1. Session child-of-parent — untitled\n   Created: 1970-01-01T00:00:00.003Z\n   Parent: parent\n   Availability: live, persisted\n",
		"2. Session child-of-caller — untitled\n   Created: 1970-01-01T00:00:00.004Z\n   Parent: caller\n   Availability: persisted\n",
		"3. Session orphan — untitled\n   Created: 1970-01-01T00:00:00.005Z\n   Parent: [outside workspace]\n   Availability: live\n",
		"4. Session unavailable — untitled\n   Created: 1970-01-01T00:00:00.006Z\n   Parent: root\n   Availability: unavailable\n",
	} {
		mustContain(t, "output", o.Text, want)
	}
	mustNotContain(t, "output", o.Text, "missing", capLine)
	auth := f.callsOf("FilterSessions")
	if len(auth) != 1 || !slices.Equal(auth[0].arg.([]sq.SessionFilter)[0].Values, []string{"parent", "missing"}) {
		t.Fatalf("parent authorization calls = %+v", auth)
	}
}

func TestSessionSearchWithoutWorkspaceOrAgent(t *testing.T) {
	f := newFake(t)
	h := newHarness(t, f, DefaultConfig())
	expectError(t, h.run(context.Background(), callerLive("caller", ""), ToolSessionSearch, `{"query":"  "}`),
		CodeUnauthorized, "cross-session search is unavailable because the caller session has no workspace")
	for _, tc := range []struct{ tool, args string }{
		{ToolSessionSearch, `{"query":"q"}`},
		{ToolEventSearch, `{"query":"q"}`},
		{ToolSessionTrace, `{}`},
		{ToolEventTrace, `{"seq":0}`},
		{ToolEventRead, `{"seq":0}`},
	} {
		expectError(t, h.run(context.Background(), nil, tc.tool, tc.args), CodeMissingAgent, "session query tools require an agent-bound caller")
	}
	if n := len(f.names()); n != 0 {
		t.Fatalf("service calls without an agent: %v", f.names())
	}
}

// parentFixture is a caller with visible, hidden (other workspace) and
// missing parent candidates; its search returns one hit per parent so a
// test can see which clause reached the provider.
func parentFixture(t *testing.T) (*harness, *fakeService) {
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("visible", 2, workspace, ""), "")
	c.add(hdr("hidden", 3, elsewhere, ""), "")
	c.add(hdr("child-of-hidden", 4, workspace, "hidden"), "")
	f := newFake(t).serve(c)
	f.searchSessions = func(_ context.Context, req sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
		matched, err := sq.FilterSessionRecords(c.records, req.SessionFilters)
		if err != nil {
			return sq.SessionSearchPage{}, err
		}
		var items []sq.SessionHit
		for _, r := range matched {
			items = append(items, sessionHit(r.Header, true, false, "match in "+r.Header.ID))
		}
		return sq.SessionSearchPage{Items: items}, nil
	}
	return newHarness(t, f, DefaultConfig()), f
}

func parentClause(t *testing.T, f *fakeService) []*string {
	t.Helper()
	req := lastSessionSearch(t, f)
	for _, sf := range req.SessionFilters {
		if sf.Kind == sq.KindParent {
			return sf.NullableValues
		}
	}
	t.Fatalf("no parent clause in %s", describeRequest(req))
	return nil
}

func TestHiddenAndMissingParentGuessesAreIndistinguishable(t *testing.T) {
	var outputs []string
	for _, guess := range []string{"hidden", "missing"} {
		h, f := parentFixture(t)
		res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, jsonArgs(t, map[string]any{
			"query": "q", "parent_session_ids": []string{guess},
		}))
		o := outcomeOf(t, res)
		if o.IsError || o.Text != noSessionMatches {
			t.Fatalf("%s: %+v", guess, o)
		}
		if n := f.count("SearchSessions"); n != 0 {
			t.Fatalf("%s: %d searches, want none", guess, n)
		}
		mustNotContain(t, "output", o.Text, "child-of-hidden")
		outputs = append(outputs, o.Text)
	}
	if outputs[0] != outputs[1] {
		t.Fatal("hidden and missing parent guesses differ")
	}
}

func TestParentClauseKeepsOnlyAuthorizedRequestedParentsPlusRoot(t *testing.T) {
	cases := []struct {
		parents []string
		want    []string // "<null>" for the root marker
	}{
		{[]string{"visible", "hidden", "visible", "missing"}, []string{"visible", "<null>"}},
		{[]string{"hidden"}, []string{"<null>"}},
		{[]string{"missing"}, []string{"<null>"}},
		{[]string{"caller", "hidden"}, []string{"caller", "<null>"}},
	}
	for _, tc := range cases {
		h, f := parentFixture(t)
		res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, jsonArgs(t, map[string]any{
			"query": "q", "parent_session_ids": tc.parents, "include_root_sessions": true,
		}))
		if outcomeOf(t, res).IsError {
			t.Fatalf("%v: %+v", tc.parents, outcomeOf(t, res))
		}
		var got []string
		for _, v := range parentClause(t, f) {
			if v == nil {
				got = append(got, "<null>")
			} else {
				got = append(got, *v)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("%v: parent clause %v, want %v", tc.parents, got, tc.want)
		}
		auth := f.callsOf("FilterSessions")[0].arg.([]sq.SessionFilter)
		wantIDs := dedupe(slices.DeleteFunc(slices.Clone(tc.parents), func(s string) bool { return s == "caller" }))
		if !slices.Equal(auth[0].Values, wantIDs) || len(f.callsOf("FilterSessions")) < 1 {
			t.Fatalf("%v: authorization asked for %v", tc.parents, auth[0].Values)
		}
	}
}

func TestForeignParentIDsChangeNothing(t *testing.T) {
	run := func(parents []string) (string, sq.SessionSearchRequest) {
		h, f := parentFixture(t)
		res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, jsonArgs(t, map[string]any{
			"query": "q", "parent_session_ids": parents, "include_root_sessions": true,
		}))
		return outcomeOf(t, res).Text, lastSessionSearch(t, f)
	}
	plainText, plainReq := run([]string{"visible"})
	foreignText, foreignReq := run([]string{"visible", "hidden", "missing", "hidden"})
	if plainText != foreignText || !reflect.DeepEqual(plainReq, foreignReq) {
		t.Fatalf("foreign parent ids changed the result:\n%s\n---\n%s", plainText, foreignText)
	}
	mustNotContain(t, "output", foreignText, "hidden", "missing")
}

func TestMisbehavingAuthorizationRecordsAreIgnored(t *testing.T) {
	f := newFake(t)
	f.filterSessions = func(context.Context, []sq.SessionFilter) ([]sq.SessionRecord, error) {
		return []sq.SessionRecord{
			{Header: hdr("unrequested", 1, workspace, "")},
			{Header: hdr("hidden", 1, elsewhere, "")},
		}, nil
	}
	h := newHarness(t, f, DefaultConfig())
	res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, `{"query":"q","parent_session_ids":["hidden"]}`)
	expectText(t, res, noSessionMatches)
	if f.count("SearchSessions") != 0 {
		t.Fatal("searched although no requested parent was authorized")
	}
}

func TestOtherFiltersAreValidatedBeforeParentPreauthorization(t *testing.T) {
	f := newFake(t)
	h := newHarness(t, f, DefaultConfig())
	res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch,
		`{"query":"q","parent_session_ids":["visible"],"event_types":[]}`)
	expectError(t, res, sq.CodeInvalidFilter, "event_types must contain at least one value when supplied")
	if len(f.names()) != 0 {
		t.Fatalf("calls = %v", f.names())
	}
}

const conflictSecret = `session source headers conflict for session "secret-id" at /secret/path`

func TestAuthorizationFailuresAreSanitized(t *testing.T) {
	for _, tc := range []struct{ tool, args string }{
		{ToolSessionSearch, `{"query":"q","parent_session_ids":["p"]}`},
		{ToolEventSearch, `{"query":"q","session_id":"other"}`},
		{ToolEventRead, `{"seq":0,"session_id":"other"}`},
	} {
		f := newFake(t)
		f.filterSessions = func(context.Context, []sq.SessionFilter) ([]sq.SessionRecord, error) {
			return nil, sq.Wrap(sq.CodeSourceConflict, errors.New("cause secret"), conflictSecret)
		}
		h := newHarness(t, f, DefaultConfig())
		res := h.run(context.Background(), callerLive("caller", workspace), tc.tool, tc.args)
		expectError(t, res, CodeToolFailed, msgToolFailed)
		if got := f.names(); !slices.Equal(got, []string{"FilterSessions"}) {
			t.Fatalf("%s calls = %v", tc.tool, got)
		}
		mustContain(t, "log", h.log.text(), conflictSecret, "cause secret")
		mustNotContain(t, "output", outcomeOf(t, res).Text, "secret")
	}
}

func TestProviderFailuresAreSanitized(t *testing.T) {
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("other", 2, workspace, ""), "")
	f := newFake(t).serve(c)
	f.searchSessions = func(context.Context, sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
		return sq.SessionSearchPage{}, sq.Wrap(sq.CodeSourceConflict, errors.New("nested secret cause"), conflictSecret)
	}
	f.searchEvents = func(context.Context, sq.EventSearchRequest) (sq.EventSearchPage, error) {
		return sq.EventSearchPage{}, fmt.Errorf("plain provider secret: %w", errors.New("string cause secret"))
	}
	h := newHarness(t, f, DefaultConfig())
	caller := callerLive("caller", workspace)
	r1 := h.run(context.Background(), caller, ToolSessionSearch, `{"query":"q"}`)
	r2 := h.run(context.Background(), caller, ToolEventSearch, `{"query":"q","session_id":"other"}`)
	for _, r := range []tools.Result{r1, r2} {
		expectError(t, r, CodeToolFailed, msgToolFailed)
	}
	logged := h.log.text()
	mustContain(t, "log", logged, "tool-session-query: session search failed: SessionQueryError: "+conflictSecret,
		"nested secret cause", "tool-session-query: event search failed: Error: plain provider secret", "string cause secret")
}

func TestStaleCursorMidDrainAsksForARetryWithoutRestarting(t *testing.T) {
	c := exampleCorpus()
	hits := exampleHits(c)
	f := newFake(t).serve(c)
	n := 0
	f.searchSessions = func(context.Context, sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
		n++
		if n == 1 {
			return sq.SessionSearchPage{Items: []sq.SessionHit{hits["a"]}, NextCursor: strp("c1")}, nil
		}
		return sq.SessionSearchPage{}, sq.Errorf(sq.CodeStaleCursor, "session-search cursor is stale")
	}
	h := newHarness(t, f, DefaultConfig())
	res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, `{"query":"q"}`)
	expectError(t, res, sq.CodeStaleCursor, "session history changed while paging; retry the complete search call")
	if n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestRepeatedCursorIsTheToolsOwnError(t *testing.T) {
	c := exampleCorpus()
	hits := exampleHits(c)
	f := newFake(t).serve(c)
	n := 0
	f.searchSessions = func(context.Context, sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
		n++
		return sq.SessionSearchPage{Items: []sq.SessionHit{hits["a"]}, NextCursor: strp("same")}, nil
	}
	h := newHarness(t, f, DefaultConfig())
	res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, `{"query":"q"}`)
	expectError(t, res, sq.CodeInvalidCursor, "session-search provider repeated a continuation cursor")
	if n != 2 || h.log.count() != 0 {
		t.Fatalf("%d requests (want 2), %d log lines (want 0)", n, h.log.count())
	}
}

// eventFixture: the caller and a session "other" in the same workspace;
// event searches return the scripted pages.
func eventFixture(t *testing.T, pages ...sq.EventSearchPage) (*harness, *fakeService) {
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("other", 2, workspace, ""), "Other work")
	f := newFake(t).serve(c)
	n := 0
	f.searchEvents = func(_ context.Context, req sq.EventSearchRequest) (sq.EventSearchPage, error) {
		if req.Limit != nil {
			t.Errorf("event search carries a limit")
		}
		if n >= len(pages) {
			t.Errorf("event search %d beyond the script", n)
			return sq.EventSearchPage{}, nil
		}
		p := pages[n]
		n++
		return p, nil
	}
	return newHarness(t, f, Config{MaxSearchResults: 2}), f
}

func eventHit(id string, seq int, snippet string) sq.EventHit {
	return sq.EventHit{EventRecord: sq.EventRecord{SessionID: id, Seq: seq, Type: session.TypeUserMessage, Time: int64(200 + seq), Surface: sq.SurfaceCurrent}, Snippet: snippet}
}

func TestCurrentSessionEventSearchExcludesTheRunningStep(t *testing.T) {
	caller := session.NewLive(hdr("caller", 1, workspace, ""), []session.Event{
		ev(0, session.TypeTurnStart, session.TurnStart{Turn: 1}),
		ev(1, session.TypeUserMessage, userMsg("earlier")),
		ev(2, session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1}),
	}, session.LiveOptions{})
	callerHdr := caller.Header()
	h, f := eventFixture(t,
		sq.EventSearchPage{Items: []sq.EventHit{eventHit("caller", 1, "earlier")}, Session: callerHdr},
		sq.EventSearchPage{Items: []sq.EventHit{}, Session: hdr("other", 2, workspace, "")},
	)
	o := outcomeOf(t, h.run(context.Background(), caller, ToolEventSearch, `{"query":"earlier","seq_from":0,"seq_to":99}`))
	if o.IsError || o.Text != "Session caller — untitled\n\nEvent search results (1):\n1. seq 1 | user/message | current | 1970-01-01T00:00:00.201Z\n   Snippet: earlier" {
		t.Fatalf("self search:\n%s", o.Text)
	}
	o = outcomeOf(t, h.run(context.Background(), caller, ToolEventSearch, `{"query":"earlier","session_id":"other","seq_from":0,"seq_to":99}`))
	if o.IsError {
		t.Fatalf("other search: %+v", o)
	}
	searches := f.callsOf("SearchEvents")
	self, other := searches[0].arg.(sq.EventSearchRequest), searches[1].arg.(sq.EventSearchRequest)
	if s := self.Filters[0]; s.Kind != sq.KindSeq || *s.From != 0 || *s.To != 1 {
		t.Fatalf("self seq clause %s %s..%s, want 0..1", s.Kind, fp(s.From), fp(s.To))
	}
	if s := other.Filters[0]; *s.From != 0 || *s.To != 99 {
		t.Fatalf("other seq clause %s..%s, want 0..99", fp(s.From), fp(s.To))
	}
	// Events appended after the execution started do not move the bound.
	if _, err := caller.Append(session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 2}); err != nil {
		t.Fatal(err)
	}
}

func TestCurrentSessionSearchPastTheStepIsEmptyWithoutSearching(t *testing.T) {
	h, f := eventFixture(t)
	caller := callerLive("caller", workspace) // step/start at seq 1
	for _, args := range []string{
		`{"query":"q","seq_from":1}`,
		`{"query":"q","seq_from":7,"time_from":"not a time","event_types":[],"surfaces":[]}`,
	} {
		expectText(t, h.run(context.Background(), caller, ToolEventSearch, args), "Session caller — untitled\n\n"+noEventMatches)
	}
	if f.count("SearchEvents") != 0 || f.count("ReadTitleSnapshots") != 2 {
		t.Fatalf("calls = %v", f.names())
	}
}

// A current step at seq 0 is the upstream quirk of session-query.md §8
// item 6: with no seq_from the effective upper bound is -1, which the seq
// clause rejects after the title read; with a seq_from the range is simply
// empty.
func TestStepAtSeqZeroRejectsTheUpperBound(t *testing.T) {
	h, f := eventFixture(t)
	caller := liveWith(hdr("caller", 1, workspace, ""), ev(0, session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1}))
	expectError(t, h.run(context.Background(), caller, ToolEventSearch, `{"query":"q","time_from":"not a time"}`),
		sq.CodeInvalidFilter, "sequence upper bound must be a non-negative safe integer")
	if f.count("SearchEvents") != 0 || f.count("ReadTitleSnapshots") != 1 {
		t.Fatalf("calls = %v, want one title read and no search", f.names())
	}
	expectText(t, h.run(context.Background(), caller, ToolEventSearch, `{"query":"q","seq_from":0}`), "Session caller — untitled\n\n"+noEventMatches)
	if f.count("SearchEvents") != 0 {
		t.Fatal("searched an empty range")
	}
}

func TestCurrentSessionSearchNeedsAStep(t *testing.T) {
	h, _ := eventFixture(t)
	caller := liveWith(hdr("caller", 1, workspace, ""), ev(0, session.TypeTurnStart, session.TurnStart{Turn: 1}))
	expectError(t, h.run(context.Background(), caller, ToolEventSearch, `{"query":"q"}`), CodeNoCurrentStep,
		"current-session search requires an active step boundary")
}

func TestOtherSessionEventPagesAreDrainedToTheCap(t *testing.T) {
	other := hdr("other", 2, workspace, "")
	h, f := eventFixture(t,
		sq.EventSearchPage{Items: []sq.EventHit{eventHit("other", 1, "needle excerpt")}, NextCursor: strp("c"), Session: other},
		sq.EventSearchPage{Items: []sq.EventHit{eventHit("other", 2, "needle excerpt"), eventHit("other", 3, "more")}, Session: other},
	)
	caller := liveWith(hdr("caller", 1, workspace, ""))
	res := h.run(context.Background(), caller, ToolEventSearch, `{"query":"needle","session_id":"other"}`)
	expectText(t, res, `Session other — Other work

Event search results (2):
1. seq 1 | user/message | current | 1970-01-01T00:00:00.201Z
   Snippet: needle excerpt
2. seq 2 | user/message | current | 1970-01-01T00:00:00.202Z
   Snippet: needle excerpt

Result cap reached. Narrow the query or add filters to find additional matches.`)
	searches := f.callsOf("SearchEvents")
	if len(searches) != 2 || searches[0].arg.(sq.EventSearchRequest).Cursor != nil || deref(searches[1].arg.(sq.EventSearchRequest).Cursor) != "c" {
		t.Fatalf("searches = %+v", searches)
	}
	if want := []string{"FilterSessions", "ReadTitleSnapshots", "SearchEvents", "SearchEvents"}; !slices.Equal(f.names(), want) {
		t.Fatalf("calls = %v, want %v", f.names(), want)
	}
}

func TestEventSearchValidatesAfterAuthorization(t *testing.T) {
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	f := newFake(t).serve(c)
	h := newHarness(t, f, DefaultConfig())
	res := h.run(context.Background(), callerLive("caller", workspace), ToolEventSearch, `{"query":"  ","session_id":"foreign"}`)
	expectError(t, res, CodeUnauthorized, msgUnauthorized)
	res = h.run(context.Background(), callerLive("caller", workspace), ToolEventSearch, `{"query":"  ","session_id":"caller"}`)
	expectError(t, res, sq.CodeInvalidQuery, "session-search query must contain non-whitespace text")
}

// titleFailureFixture runs a session search with hits first and second
// whose title batch is scripted.
func titleFailureFixture(t *testing.T, titles func(ctx context.Context, ids []string) ([]sq.TitleResult, error)) (*harness, *fakeService, tools.Result) {
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("first", 2, workspace, ""), "")
	c.add(hdr("second", 3, workspace, ""), "")
	f := newFake(t).serve(c)
	f.readTitleSnapshots = titles
	first, _ := c.header("first")
	second, _ := c.header("second")
	f.searchSessions = sessionPages(t, sessionPage{[]sq.SessionHit{sessionHit(first, true, false, "one"), sessionHit(second, true, false, "two")}, ""})
	h := newHarness(t, f, DefaultConfig())
	return h, f, h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, `{"query":"q"}`)
}

func rejected(id string, err error) sq.TitleResult {
	return sq.TitleResult{SessionID: id, Status: sq.Rejected, Reason: err}
}

func fulfilled(h session.Header, title string) sq.TitleResult {
	obs := &sq.TitleObservation{Session: h}
	if title != "" {
		obs.Title = &sq.TitleSnapshot{Title: title}
	}
	return sq.TitleResult{SessionID: h.ID, Status: sq.Fulfilled, Value: obs}
}

func TestPerTitleFailuresAnnotateWithoutFailingTheResult(t *testing.T) {
	h, f, res := titleFailureFixture(t, func(_ context.Context, ids []string) ([]sq.TitleResult, error) {
		return []sq.TitleResult{
			rejected("first", &codedError{code: "SOME_HARNESS_CODE", msg: "title secret"}),
			rejected("second", sq.Errorf(sq.CodeSessionNotFound, `session "second" not found`)),
		}, nil
	})
	o := outcomeOf(t, res)
	mustContain(t, "output", o.Text,
		"1. Session first — untitled (title unavailable: SESSION_QUERY_TOOL_FAILED)",
		"2. Session second — untitled (title unavailable: SESSION_QUERY_SESSION_NOT_FOUND)")
	mustNotContain(t, "output", o.Text, "title secret")
	mustContain(t, "log", h.log.text(), "tool-session-query: title observation item failed: HarnessError: title secret")
	if titles := f.callsOf("ReadTitleSnapshots"); len(titles) != 1 || !slices.Equal(titles[0].arg.([]string), []string{"first", "second"}) {
		t.Fatalf("title batches = %+v", titles)
	}
}

func TestStacklessTitleFailuresAndUnprintableOnes(t *testing.T) {
	h, _, res := titleFailureFixture(t, func(context.Context, []string) ([]sq.TitleResult, error) {
		return []sq.TitleResult{rejected("first", errors.New("string failure")), rejected("second", panickyError{})}, nil
	})
	o := outcomeOf(t, res)
	mustContain(t, "output", o.Text,
		"Session first — untitled (title unavailable: SESSION_QUERY_TOOL_FAILED)",
		"Session second — untitled (title unavailable: SESSION_QUERY_TOOL_FAILED)")
	mustContain(t, "log", h.log.text(), "Error: string failure", unprintable)
	mustNotContain(t, "log", h.log.text(), "secret-from-panicking-error-method")
}

func TestTitleBatchFailureFailsTheCall(t *testing.T) {
	h, _, res := titleFailureFixture(t, func(context.Context, []string) ([]sq.TitleResult, error) {
		return nil, errors.New("batch secret")
	})
	expectError(t, res, CodeToolFailed, msgToolFailed)
	mustContain(t, "log", h.log.text(), "title observation failed: Error: batch secret")
}

func TestUnauthorizedTitleObservationFailsTheWholeCall(t *testing.T) {
	for name, results := range map[string][]sq.TitleResult{
		"rejected unauthorized": {fulfilled(hdr("first", 2, workspace, ""), "One"), rejected("second", &codedError{code: CodeUnauthorized, msg: "inner unauthorized secret"})},
		"moved header":          {fulfilled(hdr("first", 2, workspace, ""), "One"), fulfilled(hdr("second", 3, elsewhere, ""), "Moved secret")},
		"swapped id":            {fulfilled(hdr("first", 2, workspace, ""), "One"), {SessionID: "second", Status: sq.Fulfilled, Value: &sq.TitleObservation{Session: hdr("first", 2, workspace, "")}}},
	} {
		_, _, res := titleFailureFixture(t, func(context.Context, []string) ([]sq.TitleResult, error) { return results, nil })
		expectError(t, res, CodeUnauthorized, msgUnauthorized)
		mustNotContain(t, name, outcomeOf(t, res).Text, "secret", "Session first")
	}
}

func TestMissingTitleResultIsUnavailableNotFatal(t *testing.T) {
	_, _, res := titleFailureFixture(t, func(context.Context, []string) ([]sq.TitleResult, error) {
		return []sq.TitleResult{fulfilled(hdr("first", 2, workspace, ""), "One"), fulfilled(hdr("unrequested", 9, workspace, ""), "Nope")}, nil
	})
	o := outcomeOf(t, res)
	mustContain(t, "output", o.Text, "Session first — One", "Session second — untitled (title unavailable: SESSION_QUERY_TOOL_FAILED)")
	mustNotContain(t, "output", o.Text, "unrequested", "Nope")
}

func TestMovedHeadersFailEveryPathWithoutPayload(t *testing.T) {
	moved := hdr("other", 2, elsewhere, "")
	ws := []string{"payload secret", "Other work"}
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("other", 2, workspace, ""), "Other work")
	f := newFake(t).serve(c)
	f.searchEvents = func(context.Context, sq.EventSearchRequest) (sq.EventSearchPage, error) {
		return sq.EventSearchPage{Items: []sq.EventHit{eventHit("other", 0, "payload secret")}, Session: moved}, nil
	}
	f.traceSession = func(context.Context, string) (sq.LineageTrace, error) {
		return sq.LineageTrace{Target: sq.SessionRecord{Header: moved}, Complete: true}, nil
	}
	f.traceEvent = func(context.Context, string, int) (sq.EventTraceObservation, error) {
		return sq.EventTraceObservation{EventTrace: sq.EventTrace{Target: sq.EventRecord{SessionID: "other", Type: "payload secret"}}, Session: moved}, nil
	}
	f.readEvent = func(context.Context, string, int, *int, *int) (sq.EventWindow, error) {
		e := ev(0, session.TypeUserMessage, userMsg("payload secret"))
		return sq.EventWindow{Session: moved, Target: e, Events: []session.Event{e}}, nil
	}
	h := newHarness(t, f, DefaultConfig())
	for _, tc := range []struct{ tool, args string }{
		{ToolEventSearch, `{"query":"q","session_id":"other"}`},
		{ToolSessionTrace, `{"session_id":"other"}`},
		{ToolEventTrace, `{"seq":0,"session_id":"other"}`},
		{ToolEventRead, `{"seq":0,"session_id":"other"}`},
	} {
		res := h.run(context.Background(), callerLive("caller", workspace), tc.tool, tc.args)
		expectError(t, res, CodeUnauthorized, msgUnauthorized)
		mustNotContain(t, tc.tool, outcomeOf(t, res).Text, ws...)
	}
}

func TestSelfReadWithAMovedOwnHeaderIsUnauthorized(t *testing.T) {
	f := newFake(t)
	f.readEvent = func(context.Context, string, int, *int, *int) (sq.EventWindow, error) {
		e := ev(0, session.TypeTurnStart, session.TurnStart{Turn: 1})
		return sq.EventWindow{Session: hdr("caller", 1, elsewhere, ""), Target: e, Events: []session.Event{e}}, nil
	}
	h := newHarness(t, f, DefaultConfig())
	expectError(t, h.run(context.Background(), callerLive("caller", workspace), ToolEventRead, `{"seq":0}`), CodeUnauthorized, msgUnauthorized)
	if got := f.names(); !slices.Equal(got, []string{"ReadEvent"}) {
		t.Fatalf("calls = %v (a self target needs no authorization call)", got)
	}
}

// With zero hits session_search still makes its one title batch call (§4.4.1
// steps 10-12), so a failing batch is observable: the persistence failure
// reaches the model sanitized instead of an empty result.
func TestZeroHitsStillReadTheTitleBatch(t *testing.T) {
	f := newFake(t)
	f.searchSessions = func(context.Context, sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
		return sq.SessionSearchPage{Items: []sq.SessionHit{}}, nil
	}
	fail := true
	f.readTitleSnapshots = func(context.Context, []string) ([]sq.TitleResult, error) {
		if fail {
			return nil, sq.Wrap(sq.CodePersistenceFailed, errors.New("disk secret"), "session persistence list failed")
		}
		return []sq.TitleResult{}, nil
	}
	h := newHarness(t, f, DefaultConfig())
	caller := callerLive("caller", workspace)
	expectError(t, h.run(context.Background(), caller, ToolSessionSearch, `{"query":"q"}`),
		sq.CodePersistenceFailed, "session history storage is unavailable")
	fail = false
	expectText(t, h.run(context.Background(), caller, ToolSessionSearch, `{"query":"q"}`), noSessionMatches)
	if want := []string{"SearchSessions", "ReadTitleSnapshots", "SearchSessions", "ReadTitleSnapshots"}; !slices.Equal(f.names(), want) {
		t.Fatalf("calls = %v, want %v", f.names(), want)
	}
	for _, c := range f.callsOf("ReadTitleSnapshots") {
		if ids := c.arg.([]string); len(ids) != 0 {
			t.Fatalf("title batch ids = %v, want none", ids)
		}
	}
}
