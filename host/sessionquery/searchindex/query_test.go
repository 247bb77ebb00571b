package searchindex

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

func intp(v int) *int                 { return &v }
func strp(v string) *string           { return &v }
func floatp(v float64) *float64       { return &v }
func testConfig() Config              { c := DefaultConfig(MemoryPath); c.DefaultLimit = 2; return c }
func nullable(v ...*string) []*string { return v }

// wantCode fails unless err is a *sessionquery.Error with code.
func wantCode(t *testing.T, err error, code string) *sessionquery.Error {
	t.Helper()
	var qe *sessionquery.Error
	if !errors.As(err, &qe) {
		t.Fatalf("err = %v (%T), want a session-query error %s", err, err, code)
	}
	if qe.Code != code {
		t.Fatalf("code = %s (%q), want %s", qe.Code, qe.Message, code)
	}
	return qe
}

func TestNormalizeSessionsCollapsesTheQueryAndDefaultsTheRest(t *testing.T) {
	c := testConfig()
	got, err := c.normalizeSessions(sessionquery.SessionSearchRequest{Query: "  alpha\n beta  ", Cursor: strp("c")})
	if err != nil {
		t.Fatal(err)
	}
	if got.query != "alpha beta" || got.limit != 2 || got.cursor == nil || *got.cursor != "c" {
		t.Errorf("normalized = %+v", got)
	}
	if got.sessionFilters == nil || got.eventFilters == nil || len(got.sessionFilters)+len(got.eventFilters) != 0 {
		t.Errorf("missing filter arrays = %#v %#v, want empty", got.sessionFilters, got.eventFilters)
	}
	ev, err := c.normalizeEvents(sessionquery.EventSearchRequest{SessionID: "s", Query: "\talpha\u3000beta\ufeff"})
	if err != nil {
		t.Fatal(err)
	}
	if ev.query != "alpha beta" || ev.limit != 2 || ev.filters == nil || ev.sessionID != "s" {
		t.Errorf("normalized events = %+v", ev)
	}
}

func TestNormalizeRejectsBadRequests(t *testing.T) {
	c := testConfig()
	c.MaxLimit = 5
	tests := []struct {
		name string
		req  sessionquery.SessionSearchRequest
		code string
		msg  string
	}{
		{"blank query", sessionquery.SessionSearchRequest{Query: " \n\t"}, sessionquery.CodeInvalidQuery, "session-search query must contain non-whitespace text"},
		{"NUL", sessionquery.SessionSearchRequest{Query: "a\x00b"}, sessionquery.CodeInvalidQuery, "session-search query must not contain NUL"},
		{"text filter", sessionquery.SessionSearchRequest{Query: "a", EventFilters: []sessionquery.EventFilter{{Kind: "text", Text: "x"}}}, sessionquery.CodeInvalidFilter, "session-search metadata filters do not accept text clauses"},
		{"empty filter", sessionquery.SessionSearchRequest{Query: "a", EventFilters: []sessionquery.EventFilter{{}}}, sessionquery.CodeInvalidFilter, "session filter contains unknown kind (missing)"},
		{"unknown session kind", sessionquery.SessionSearchRequest{Query: "a", SessionFilters: []sessionquery.SessionFilter{{Kind: "owner"}}}, sessionquery.CodeInvalidFilter, `session filter contains unknown kind "owner"`},
		{"limit 0", sessionquery.SessionSearchRequest{Query: "a", Limit: intp(0)}, sessionquery.CodeInvalidLimit, "session-search limit must be an integer between 1 and 5"},
		{"limit above max", sessionquery.SessionSearchRequest{Query: "a", Limit: intp(6)}, sessionquery.CodeInvalidLimit, "session-search limit must be an integer between 1 and 5"},
		{"reversed seq", sessionquery.SessionSearchRequest{Query: "a", EventFilters: []sessionquery.EventFilter{{Kind: "seq", From: floatp(2), To: floatp(1)}}}, sessionquery.CodeInvalidFilter, "session seq filter from must be less than or equal to to"},
		{"unknown surface", sessionquery.SessionSearchRequest{Query: "a", EventFilters: []sessionquery.EventFilter{{Kind: "surface", Values: []string{"gone"}}}}, sessionquery.CodeInvalidFilter, `session surface filter contains unknown value "gone"`},
		{"unknown availability", sessionquery.SessionSearchRequest{Query: "a", SessionFilters: []sessionquery.SessionFilter{{Kind: "availability", Values: []string{"maybe"}}}}, sessionquery.CodeInvalidFilter, `session availability filter contains unknown value "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.normalizeSessions(tt.req)
			if qe := wantCode(t, err, tt.code); qe.Message != tt.msg {
				t.Errorf("message = %q, want %q", qe.Message, tt.msg)
			}
		})
	}
	big := testConfig()
	big.MaxLimit = maxLimitBound
	_, err := big.normalizeSessions(sessionquery.SessionSearchRequest{Query: "a", Limit: intp(1<<53 - 1)})
	wantCode(t, err, sessionquery.CodeInvalidLimit)
}

func TestNormalizeCopiesFilterValues(t *testing.T) {
	values := []string{"a", "b"}
	cwd := strp("/w")
	from := floatp(1)
	req := sessionquery.SessionSearchRequest{
		Query:          "q",
		SessionFilters: []sessionquery.SessionFilter{{Kind: "id", Values: values}, {Kind: "cwd", NullableValues: []*string{cwd}}},
		EventFilters:   []sessionquery.EventFilter{{Kind: "seq", From: from}},
	}
	got, err := testConfig().normalizeSessions(req)
	if err != nil {
		t.Fatal(err)
	}
	values[0], *cwd, *from = "z", "/moved", 99
	req.SessionFilters[0].Kind = "cwd"
	if got.sessionFilters[0].Kind != "id" || got.sessionFilters[0].Values[0] != "a" ||
		*got.sessionFilters[1].NullableValues[0] != "/w" || *got.eventFilters[0].From != 1 {
		t.Errorf("normalized request shares memory with the caller: %+v", got)
	}
}

func TestNormalizeQueryTurnsMarkersAndBrokenUTF8IntoReplacementChars(t *testing.T) {
	got, err := normalizeQuery("a\uFDD0b\uFDD1 \xed\xa0\x80")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(got, "\uFDD0\uFDD1") || !strings.Contains(got, "\uFFFD") || got != "a\uFFFDb\uFFFD \uFFFD" {
		t.Errorf("normalizeQuery = %q", got)
	}
}

func TestQuoteFTSMakesOperatorsData(t *testing.T) {
	if got := quoteFTS(`say "needle" OR *`); got != `"say ""needle"" OR *"` {
		t.Errorf("quoteFTS = %s", got)
	}
}
