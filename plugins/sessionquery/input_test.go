package sessionquery

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// epoch2026 is 2026-07-24T00:00:00.000Z in epoch milliseconds.
var epoch2026 = time.Date(2026, 7, 24, 0, 0, 0, 0, time.UTC).UnixMilli()

func TestParseTimestampGrammar(t *testing.T) {
	cases := []struct {
		in   string
		want tsError
		ms   int64
		rest string
	}{
		{"2026-07-24T00:00Z", tsOK, epoch2026, ""},
		{"2026-07-24T00:00:00Z", tsOK, epoch2026, ""},
		{"2026-07-24T00:00:00.1Z", tsOK, epoch2026 + 100, ""},
		{"2026-07-24T00:00:00.12Z", tsOK, epoch2026 + 120, ""},
		{"2026-07-24T00:00:00.123Z", tsOK, epoch2026 + 123, ""},
		{"2026-07-24T00:00:00.1230000100Z", tsOK, epoch2026 + 123, "00001"},
		{"2026-07-24T08:00:00.000+08:00", tsOK, epoch2026, ""},
		{"2026-07-23T19:30:00-04:30", tsOK, epoch2026, ""},
		{"2024-02-29T00:00Z", tsOK, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC).UnixMilli(), ""},
		{"2000-02-29T23:59:59.999Z", tsOK, time.Date(2000, 2, 29, 23, 59, 59, 999e6, time.UTC).UnixMilli(), ""},
		{"0000-01-01T00:00Z", tsOK, time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), ""},
		{"1969-12-31T23:59:59.9999999Z", tsOK, -1, "9999"},

		{"2026-07-24T00:00:00", tsPattern, 0, ""},
		{"2026-07-24", tsPattern, 0, ""},
		{"2026-07-24t00:00Z", tsPattern, 0, ""},
		{"2026-07-24T00:00z", tsPattern, 0, ""},
		{"2026-07-24T00:00+0800", tsPattern, 0, ""},
		{"2026-07-24T00:00+08", tsPattern, 0, ""},
		{"2026-07-24T00:00.5Z", tsPattern, 0, ""},
		{"2026-07-24T00:00:00.Z", tsPattern, 0, ""},
		{"2026-7-24T00:00Z", tsPattern, 0, ""},
		{"+02026-07-24T00:00Z", tsPattern, 0, ""},
		{" 2026-07-24T00:00Z", tsPattern, 0, ""},
		{"2026-07-24T00:00Z ", tsPattern, 0, ""},
		{"2026-07-24 00:00Z", tsPattern, 0, ""},
		{"２026-07-24T00:00Z", tsPattern, 0, ""},
		{"", tsPattern, 0, ""},

		{"2026-02-30T00:00Z", tsInvalid, 0, ""},
		{"2100-02-29T00:00Z", tsInvalid, 0, ""},
		{"2026-04-31T00:00Z", tsInvalid, 0, ""},
		{"2026-13-01T00:00Z", tsInvalid, 0, ""},
		{"2026-00-01T00:00Z", tsInvalid, 0, ""},
		{"2026-01-00T00:00Z", tsInvalid, 0, ""},
		{"2026-07-24T24:00Z", tsInvalid, 0, ""},
		{"2026-07-24T00:60Z", tsInvalid, 0, ""},
		{"2026-07-24T00:00:60Z", tsInvalid, 0, ""},
		{"2026-07-24T00:00+24:00", tsInvalid, 0, ""},
		{"2026-07-24T00:00+00:60", tsInvalid, 0, ""},
	}
	for _, tc := range cases {
		got, err := parseTimestamp(tc.in)
		if err != tc.want {
			t.Errorf("parseTimestamp(%q) error class = %d, want %d", tc.in, err, tc.want)
			continue
		}
		if err == tsOK && (got.ms != tc.ms || got.rest != tc.rest) {
			t.Errorf("parseTimestamp(%q) = %+v, want {%d %q}", tc.in, got, tc.ms, tc.rest)
		}
	}
}

func TestTimestampBoundsAreExactFloats(t *testing.T) {
	lo := func(s string) float64 { ts, _ := parseTimestamp(s); return ts.lowerBound() }
	hi := func(s string) float64 { ts, _ := parseTimestamp(s); return ts.upperBound() }
	if v := lo("1970-01-01T00:00:00.0000001Z"); v != 5e-324 {
		t.Fatalf("lower bound near zero = %v, want 5e-324", v)
	}
	if v := hi("1969-12-31T23:59:59.9999999Z"); v != -5e-324 {
		t.Fatalf("upper bound near zero = %v, want -5e-324", v)
	}
	if v := lo("2026-07-24T00:00:00.123Z"); v != float64(epoch2026+123) {
		t.Fatalf("whole-millisecond lower bound = %v", v)
	}
	if v := hi("2026-07-24T00:00:00.123Z"); v != float64(epoch2026+123) {
		t.Fatalf("whole-millisecond upper bound = %v", v)
	}
	from, to := lo("2026-07-24T00:00:00.12300001Z"), hi("2026-07-24T00:00:00.1239999Z")
	if !(float64(epoch2026+123) < from && from < to && to < float64(epoch2026+124)) {
		t.Fatalf("sub-millisecond bounds %v..%v are not strictly inside the millisecond", from, to)
	}
}

func TestTimestampOrderComparesSubMillisecondDigits(t *testing.T) {
	p := func(s string) timestamp { ts, _ := parseTimestamp("2026-07-24T00:00:00" + s + "Z"); return ts }
	cases := []struct {
		a, b  string
		after bool
	}{
		{".12311", ".1231", true},
		{".1231", ".12311", false},
		{".1230000100", ".12300001", false},
		{".12300001", ".1230000100", false},
		{".1239999", ".12300001", true},
		{".124", ".1239999", true},
		{".1231", ".123", true},
		{".123", ".1231", false},
	}
	for _, tc := range cases {
		if got := p(tc.a).after(p(tc.b)); got != tc.after {
			t.Errorf("%s after %s = %v, want %v", tc.a, tc.b, got, tc.after)
		}
	}
}

// searchHarness is a caller in the workspace and a fake whose session
// search records requests and returns no hits.
func searchHarness(t *testing.T) (*harness, *fakeService, *corpus) {
	t.Helper()
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("visible", 2, workspace, ""), "")
	c.add(hdr("visible-2", 3, workspace, ""), "")
	c.add(hdr("hidden", 4, elsewhere, ""), "")
	f := newFake(t).serve(c)
	f.searchSessions = func(context.Context, sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
		return sq.SessionSearchPage{Items: []sq.SessionHit{}}, nil
	}
	return newHarness(t, f, DefaultConfig()), f, c
}

func TestSessionSearchArgumentErrors(t *testing.T) {
	const filter, query, args = sq.CodeInvalidFilter, sq.CodeInvalidQuery, tools.CodeInvalidArgs
	ts := func(name, v string) string { return fmt.Sprintf(`,%q:%q`, name, v) }
	cases := []struct {
		name string
		args string
		code string
		msg  string
	}{
		{"blank query", `{"query":" \n\t\u3000 "}`, query, "session-search query must contain non-whitespace text"},
		{"NUL in query", `{"query":"a\u0000b"}`, query, "session-search query must not contain NUL"},
		{"empty session_ids", `{"query":"q","session_ids":[]}`, filter, "session_ids must contain at least one value when supplied"},
		{"empty parent ids", `{"query":"q","parent_session_ids":[]}`, filter, "parent_session_ids must contain at least one value when supplied"},
		{"empty availability", `{"query":"q","availability":[]}`, filter, "availability must contain at least one value when supplied"},
		{"empty event types", `{"query":"q","event_types":[]}`, filter, "event_types must contain at least one value when supplied"},
		{"empty event surfaces", `{"query":"q","event_surfaces":[]}`, filter, "surfaces must contain at least one value when supplied"},
		{"unknown availability", `{"query":"q","availability":["archived"]}`, args, `invalid arguments: availability[0]: must be one of "live", "persisted"`},
		{"unknown surface", `{"query":"q","event_surfaces":["hidden"]}`, args, `invalid arguments: event_surfaces[0]: must be one of "current", "shadowed", "log-only"`},
		{"negative seq", `{"query":"q","event_seq_from":-1}`, filter, "sequence lower bound must be a non-negative safe integer"},
		{"seq 2^53", `{"query":"q","event_seq_to":9007199254740992}`, filter, "sequence upper bound must be a non-negative safe integer"},
		{"reversed seq", `{"query":"q","event_seq_from":5,"event_seq_to":4}`, filter, "session sequence range from must be less than or equal to to"},
		{"no zone", `{"query":"q"` + ts("created_at_from", "2026-07-24T00:00:00") + `}`, filter, "session created_at_from range must be an ISO 8601 timestamp with Z or a numeric offset"},
		{"Feb 30", `{"query":"q"` + ts("created_at_to", "2026-02-30T00:00Z") + `}`, filter, "session created_at_to range must be a valid ISO 8601 timestamp"},
		{"2100-02-29", `{"query":"q"` + ts("created_at_from", "2100-02-29T00:00Z") + `}`, filter, "session created_at_from range must be a valid ISO 8601 timestamp"},
		{"Apr 31", `{"query":"q"` + ts("event_time_from", "2026-04-31T00:00Z") + `}`, filter, "session time_from range must be a valid ISO 8601 timestamp"},
		{"hour 24", `{"query":"q"` + ts("event_time_to", "2026-07-24T24:00Z") + `}`, filter, "session time_to range must be a valid ISO 8601 timestamp"},
		{"minute 60", `{"query":"q"` + ts("created_at_from", "2026-07-24T00:60Z") + `}`, filter, "session created_at_from range must be a valid ISO 8601 timestamp"},
		{"second 60", `{"query":"q"` + ts("created_at_from", "2026-07-24T00:00:60Z") + `}`, filter, "session created_at_from range must be a valid ISO 8601 timestamp"},
		{"offset +24:00", `{"query":"q"` + ts("created_at_from", "2026-07-24T00:00+24:00") + `}`, filter, "session created_at_from range must be a valid ISO 8601 timestamp"},
		{"offset +00:60", `{"query":"q"` + ts("created_at_from", "2026-07-24T00:00+00:60") + `}`, filter, "session created_at_from range must be a valid ISO 8601 timestamp"},
		{"event time without zone", `{"query":"q"` + ts("event_time_from", "2026-07-24T00:00") + `}`, filter, "session time_from range must be an ISO 8601 timestamp with Z or a numeric offset"},
		{"reversed created range", `{"query":"q"` + ts("created_at_from", "2026-07-24T00:00:01Z") + ts("created_at_to", "2026-07-24T00:00Z") + `}`, filter, "session created_at range from must be less than or equal to to"},
		{"reversed time range", `{"query":"q"` + ts("event_time_from", "2026-07-24T00:00:01Z") + ts("event_time_to", "2026-07-24T00:00Z") + `}`, filter, "session time range from must be less than or equal to to"},
		{"reversed below one ms", `{"query":"q"` + ts("created_at_from", "2026-07-24T00:00:00.1239999Z") + ts("created_at_to", "2026-07-24T00:00:00.12300001Z") + `}`, filter, "session created_at range from must be less than or equal to to"},
		{"reversed .12311 to .1231", `{"query":"q"` + ts("created_at_from", "2026-07-24T00:00:00.12311Z") + ts("created_at_to", "2026-07-24T00:00:00.1231Z") + `}`, filter, "session created_at range from must be less than or equal to to"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, f, _ := searchHarness(t)
			expectError(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, tc.args), tc.code, tc.msg)
			if n := len(f.names()); n != 0 {
				t.Fatalf("service calls after a validation error: %v", f.names())
			}
		})
	}
}

func f64(v float64) *float64 { return &v }

// lastSessionSearch returns the one session search request the fake saw.
func lastSessionSearch(t *testing.T, f *fakeService) sq.SessionSearchRequest {
	t.Helper()
	calls := f.callsOf("SearchSessions")
	if len(calls) != 1 {
		t.Fatalf("%d session searches, want 1 (calls %v)", len(calls), f.names())
	}
	return calls[0].arg.(sq.SessionSearchRequest)
}

func TestSessionSearchTranslatesArgumentsIntoOneExactRequest(t *testing.T) {
	h, f, _ := searchHarness(t)
	args := `{"query":"  alpha \n beta ","session_ids":["a","b","a"],` +
		`"created_at_from":"2026-07-24T00:00Z","created_at_to":"2026-07-24T00:00:01.5Z",` +
		`"parent_session_ids":["visible","visible"],"include_root_sessions":true,"availability":["live"],` +
		`"event_seq_from":2,"event_seq_to":9,"event_time_from":"2026-07-24T08:00+08:00","event_time_to":"2026-07-24T00:00:02Z",` +
		`"event_types":["plugin/open-event"],"event_surfaces":["shadowed"],"cwd":"/etc","limit":3}`
	expectText(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, args), noSessionMatches)
	ws := workspace
	visible := "visible"
	want := sq.SessionSearchRequest{
		Query: "alpha beta",
		SessionFilters: []sq.SessionFilter{
			{Kind: sq.KindID, Values: []string{"a", "b", "a"}},
			{Kind: sq.KindCreatedAt, From: f64(float64(epoch2026)), To: f64(float64(epoch2026 + 1500))},
			{Kind: sq.KindAvailability, Values: []string{"live"}},
			{Kind: sq.KindParent, NullableValues: []*string{&visible, nil}},
			{Kind: sq.KindCwd, NullableValues: []*string{&ws}},
		},
		EventFilters: []sq.EventFilter{
			{Kind: sq.KindSeq, From: f64(2), To: f64(9)},
			{Kind: sq.KindTime, From: f64(float64(epoch2026)), To: f64(float64(epoch2026 + 2000))},
			{Kind: sq.KindType, Values: []string{"plugin/open-event"}},
			{Kind: sq.KindSurface, Values: []string{"shadowed"}},
		},
	}
	if got := lastSessionSearch(t, f); !reflect.DeepEqual(got, want) {
		t.Fatalf("request =\n%s\nwant\n%s", describeRequest(got), describeRequest(want))
	}
}

func describeRequest(r sq.SessionSearchRequest) string {
	s := fmt.Sprintf("query=%q limit=%v cursor=%v\n", r.Query, r.Limit, r.Cursor)
	for _, f := range r.SessionFilters {
		s += fmt.Sprintf("  session %s values=%v nullable=%s from=%s to=%s\n", f.Kind, f.Values, nullables(f.NullableValues), fp(f.From), fp(f.To))
	}
	for _, f := range r.EventFilters {
		s += fmt.Sprintf("  event %s values=%v from=%s to=%s\n", f.Kind, f.Values, fp(f.From), fp(f.To))
	}
	return s
}

func nullables(v []*string) string {
	s := "["
	for _, p := range v {
		if p == nil {
			s += " null"
		} else {
			s += " " + *p
		}
	}
	return s + " ]"
}

func fp(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("%v", *p)
}

// createdRange runs a session search with a created-at range and returns
// the created-at clause sent, or nil when no search ran.
func createdRange(t *testing.T, from, to string) (*sq.SessionFilter, outcome) {
	t.Helper()
	h, f, _ := searchHarness(t)
	args := fmt.Sprintf(`{"query":"q","created_at_from":%q,"created_at_to":%q}`, from, to)
	o := outcomeOf(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, args))
	calls := f.callsOf("SearchSessions")
	if len(calls) == 0 {
		return nil, o
	}
	req := calls[0].arg.(sq.SessionSearchRequest)
	return &req.SessionFilters[0], o
}

func TestFractionalBoundsOfOneToThreeDigitsAreWholeMilliseconds(t *testing.T) {
	for digits, want := range map[string]int64{".1": 100, ".12": 120, ".123": 123} {
		c, o := createdRange(t, "2026-07-24T00:00:00"+digits+"Z", "2026-07-24T00:00:00"+digits+"Z")
		if c == nil || o.IsError || *c.From != float64(epoch2026+want) || *c.To != float64(epoch2026+want) {
			t.Fatalf("%s: clause %+v outcome %+v", digits, c, o)
		}
	}
}

func TestSubMillisecondBoundsInsideOneMillisecondAreAValidEmptyInterval(t *testing.T) {
	c, o := createdRange(t, "2026-07-24T00:00:00.12300001Z", "2026-07-24T00:00:00.1239999Z")
	if c == nil || o.IsError || o.Text != noSessionMatches {
		t.Fatalf("clause %+v outcome %+v", c, o)
	}
	lo, hi := float64(epoch2026+123), float64(epoch2026+124)
	if !(lo < *c.From && *c.From < *c.To && *c.To < hi) || math.IsInf(*c.From, 0) || math.IsInf(*c.To, 0) {
		t.Fatalf("bounds %v..%v not strictly inside %v..%v", *c.From, *c.To, lo, hi)
	}
}

func TestSubMillisecondOrderIsExact(t *testing.T) {
	cases := []struct {
		from, to string
		ok       bool
	}{
		{".1231", ".12311", true},
		{".12311", ".1231", false},
		{".1230000100", ".12300001", true},
		{".1239999", ".12300001", false},
	}
	for _, tc := range cases {
		c, o := createdRange(t, "2026-07-24T00:00:00"+tc.from+"Z", "2026-07-24T00:00:00"+tc.to+"Z")
		if tc.ok != (c != nil && !o.IsError) {
			t.Errorf("%s..%s: clause %+v outcome %+v, want accepted=%v", tc.from, tc.to, c, o, tc.ok)
		}
		if !tc.ok && o.Code != sq.CodeInvalidFilter {
			t.Errorf("%s..%s: code %s, want INVALID_FILTER", tc.from, tc.to, o.Code)
		}
	}
}

func TestBoundsNearTheEpochAreTheSmallestFloats(t *testing.T) {
	c, o := createdRange(t, "1970-01-01T00:00:00.0000001Z", "1970-01-01T00:00:00.0000001Z")
	if c == nil || o.IsError || *c.From != 5e-324 || *c.To != math.Nextafter(1, math.Inf(-1)) {
		t.Fatalf("near-zero lower bound: clause %+v outcome %+v", c, o)
	}
	c, o = createdRange(t, "1969-12-31T23:59:59.9999999Z", "1969-12-31T23:59:59.9999999Z")
	if c == nil || o.IsError || *c.To != -5e-324 || *c.From != math.Nextafter(-1, math.Inf(1)) {
		t.Fatalf("near-zero upper bound: clause %+v outcome %+v", c, o)
	}
}

func TestPreEpochFractionalEventBoundsInEventSearch(t *testing.T) {
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("other", 2, workspace, ""), "")
	f := newFake(t).serve(c)
	f.searchEvents = func(_ context.Context, req sq.EventSearchRequest) (sq.EventSearchPage, error) {
		h, _ := c.header(req.SessionID)
		return sq.EventSearchPage{Items: []sq.EventHit{}, Session: h}, nil
	}
	h := newHarness(t, f, DefaultConfig())
	args := `{"session_id":"other","query":"q","time_from":"1969-12-31T23:59:59.87600001Z","time_to":"1969-12-31T23:59:59.8769999Z"}`
	expectText(t, h.run(context.Background(), callerLive("caller", workspace), ToolEventSearch, args), "Session other — untitled\n\n"+noEventMatches)
	req := f.callsOf("SearchEvents")[0].arg.(sq.EventSearchRequest)
	tf := req.Filters[0]
	if tf.Kind != sq.KindTime || !(-124 < *tf.From && *tf.From < *tf.To && *tf.To < -123) {
		t.Fatalf("time clause %s %s..%s, want strictly inside -124..-123", tf.Kind, fp(tf.From), fp(tf.To))
	}
}

func TestOneSidedRangesAndParentClauses(t *testing.T) {
	ws, visible := workspace, "visible"
	cases := []struct {
		name string
		args string
		want []sq.SessionFilter
	}{
		{"created from only", `{"query":"q","created_at_from":"2026-07-24T00:00Z"}`, []sq.SessionFilter{
			{Kind: sq.KindCreatedAt, From: f64(float64(epoch2026))},
			{Kind: sq.KindCwd, NullableValues: []*string{&ws}},
		}},
		{"created to only", `{"query":"q","created_at_to":"2026-07-24T00:00Z"}`, []sq.SessionFilter{
			{Kind: sq.KindCreatedAt, To: f64(float64(epoch2026))},
			{Kind: sq.KindCwd, NullableValues: []*string{&ws}},
		}},
		{"root only", `{"query":"q","include_root_sessions":true}`, []sq.SessionFilter{
			{Kind: sq.KindParent, NullableValues: []*string{nil}},
			{Kind: sq.KindCwd, NullableValues: []*string{&ws}},
		}},
		{"root false is no clause", `{"query":"q","include_root_sessions":false}`, []sq.SessionFilter{
			{Kind: sq.KindCwd, NullableValues: []*string{&ws}},
		}},
		{"parents only", `{"query":"q","parent_session_ids":["visible"]}`, []sq.SessionFilter{
			{Kind: sq.KindParent, NullableValues: []*string{&visible}},
			{Kind: sq.KindCwd, NullableValues: []*string{&ws}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, f, _ := searchHarness(t)
			expectText(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, tc.args), noSessionMatches)
			got := lastSessionSearch(t, f)
			if !reflect.DeepEqual(got.SessionFilters, tc.want) || got.EventFilters != nil {
				t.Fatalf("request =\n%s", describeRequest(got))
			}
		})
	}
	h, f, _ := searchHarness(t)
	expectText(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionSearch, `{"query":"q","event_time_to":"2026-07-24T00:00Z"}`), noSessionMatches)
	if ef := lastSessionSearch(t, f).EventFilters; len(ef) != 1 || ef[0].From != nil || *ef[0].To != float64(epoch2026) {
		t.Fatalf("one-sided event time clause: %+v", ef)
	}
}

func TestIntegerArgumentsBeyondTheSafeRangeAreRejectedByTheTool(t *testing.T) {
	for _, tc := range []struct {
		tool, args, code, msg string
	}{
		{ToolEventTrace, `{"seq":-1}`, sq.CodeInvalidFilter, "seq must be a non-negative safe integer"},
		{ToolEventRead, `{"seq":9007199254740992}`, sq.CodeInvalidFilter, "seq must be a non-negative safe integer"},
		{ToolEventRead, `{"seq":1e300}`, sq.CodeInvalidFilter, "seq must be a non-negative safe integer"},
		{ToolEventRead, `{"seq":0,"before":-1}`, sq.CodeInvalidFilter, "before must be a non-negative safe integer"},
		{ToolEventRead, `{"seq":0,"after":9007199254740993}`, sq.CodeInvalidFilter, "after must be a non-negative safe integer"},
		{ToolEventRead, `{"seq":0,"after":1.5}`, tools.CodeInvalidArgs, "invalid arguments: after: expected integer, got number 1.5"},
		{ToolEventSearch, `{"query":"q","seq_from":-1}`, sq.CodeInvalidFilter, "sequence lower bound must be a non-negative safe integer"},
	} {
		f := newFake(t)
		c := &corpus{}
		c.add(hdr("caller", 1, workspace, ""), "")
		f.serve(c)
		h := newHarness(t, f, DefaultConfig())
		// Integer validation precedes the caller lookup, so it wins even
		// without an agent; the event search validates after authorization.
		var caller = callerLive("caller", workspace)
		if tc.tool != ToolEventSearch {
			caller = nil
		}
		expectError(t, h.run(context.Background(), caller, tc.tool, tc.args), tc.code, tc.msg)
		if tc.tool != ToolEventSearch && len(f.names()) != 0 {
			t.Fatalf("%s %s made service calls %v", tc.tool, tc.args, f.names())
		}
	}
	if v, ok := nonNegativeSafe("9007199254740991"); !ok || v != 1<<53-1 {
		t.Fatalf("2^53-1 rejected")
	}
	if v, ok := nonNegativeSafe("-0"); !ok || v != 0 {
		t.Fatalf("-0 rejected")
	}
	if v, ok := nonNegativeSafe("4e2"); !ok || v != 400 {
		t.Fatalf("4e2 rejected")
	}
}
