package searchindex

import (
	"encoding/base64"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

func TestCursorRoundTripsAndChecksEveryField(t *testing.T) {
	p := cursorPayload{Version: 1, Instance: "i", Scope: scopeEvents, Fingerprint: "f", Generation: "live:3", Offset: 20}
	c := encodeCursor(p)
	if off, err := decodeCursor(c, "i", scopeEvents, "f", "live:3"); err != nil || off != 20 {
		t.Fatalf("decode = %d, %v", off, err)
	}
	tests := []struct {
		name                     string
		cursor                   string
		instance, scope, fp, gen string
		code                     string
	}{
		{"not base64", "%%%", "i", scopeEvents, "f", "live:3", sessionquery.CodeInvalidCursor},
		{"not json", base64.RawURLEncoding.EncodeToString([]byte("not-json")), "i", scopeEvents, "f", "live:3", sessionquery.CodeInvalidCursor},
		{"other instance", c, "j", scopeEvents, "f", "live:3", sessionquery.CodeInvalidCursor},
		{"other scope", c, "i", scopeSessions, "f", "live:3", sessionquery.CodeInvalidCursor},
		{"other request", c, "i", scopeEvents, "g", "live:3", sessionquery.CodeInvalidCursor},
		{"stale", c, "i", scopeEvents, "f", "live:4", sessionquery.CodeStaleCursor},
		{"huge offset", raw(`{"version":1,"instance":"i","scope":"events","fingerprint":"f","generation":"live:3","offset":1e100}`), "i", scopeEvents, "f", "live:3", sessionquery.CodeInvalidCursor},
		{"negative offset", raw(`{"version":1,"instance":"i","scope":"events","fingerprint":"f","generation":"live:3","offset":-1}`), "i", scopeEvents, "f", "live:3", sessionquery.CodeInvalidCursor},
		{"other version", raw(`{"version":2,"instance":"i","scope":"events","fingerprint":"f","generation":"live:3","offset":1}`), "i", scopeEvents, "f", "live:3", sessionquery.CodeInvalidCursor},
		{"stale but also invalid", raw(`{"version":1,"instance":"i","scope":"events","fingerprint":"f","generation":"x","offset":1.5}`), "i", scopeEvents, "f", "live:3", sessionquery.CodeInvalidCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeCursor(tt.cursor, tt.instance, tt.scope, tt.fp, tt.gen)
			wantCode(t, err, tt.code)
		})
	}
}

func raw(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestFingerprintsIgnoreFilterAndValueOrder(t *testing.T) {
	a := sessionsRequest{
		query: "q", limit: 5,
		sessionFilters: []sessionquery.SessionFilter{
			{Kind: "cwd", NullableValues: nullable(strp("/b"), nil, strp("/a"))},
			{Kind: "id", Values: []string{"y", "x"}},
		},
		eventFilters: []sessionquery.EventFilter{{Kind: "type", Values: []string{"b", "a"}}, {Kind: "seq", From: floatp(1)}},
	}
	b := sessionsRequest{
		query: "q", limit: 5,
		sessionFilters: []sessionquery.SessionFilter{
			{Kind: "id", Values: []string{"x", "y"}},
			{Kind: "cwd", NullableValues: nullable(nil, strp("/a"), strp("/b"))},
		},
		eventFilters: []sessionquery.EventFilter{{Kind: "seq", From: floatp(1)}, {Kind: "type", Values: []string{"a", "b"}}},
	}
	if sessionsFingerprint(a) != sessionsFingerprint(b) {
		t.Error("fingerprints differ for reordered filters and values")
	}
	c := b
	c.limit = 6
	d := b
	d.query = "r"
	if sessionsFingerprint(c) == sessionsFingerprint(b) || sessionsFingerprint(d) == sessionsFingerprint(b) {
		t.Error("fingerprint ignores the limit or the query")
	}
	e1 := eventsRequest{sessionID: "s1", query: "q", limit: 5, filters: []sessionquery.EventFilter{}}
	e2 := e1
	e2.sessionID = "s2"
	if eventsFingerprint(e1) == eventsFingerprint(e2) {
		t.Error("events fingerprint ignores the session id")
	}
	if eventsFingerprint(e1) == sessionsFingerprint(sessionsRequest{query: "q", limit: 5}) {
		t.Error("scopes share a fingerprint")
	}
}
