package searchindex

import (
	"context"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
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

func TestPagingAndCursorStaleness(t *testing.T) {
	f := newFixture(t)
	target := f.live(hdr("t", 1), texts("needle one", "needle two", "needle three"))
	f.live(hdr("u", 2), texts("needle four"))
	ctx := context.Background()

	var got []int
	var cursors []string
	req := sessionquery.EventSearchRequest{SessionID: "t", Query: "needle", Limit: intp(1)}
	for {
		p := f.events(req)
		got = append(got, seqs(p)...)
		if p.NextCursor == nil {
			break
		}
		cursors = append(cursors, *p.NextCursor)
		req.Cursor = p.NextCursor
	}
	if len(got) != 3 || !distinct(got) {
		t.Fatalf("paged seqs = %v", got)
	}
	var ids []string
	sreq := sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(1)}
	for {
		p := f.sessions(sreq)
		ids = append(ids, sessionIDs(p)...)
		if p.NextCursor == nil {
			break
		}
		sreq.Cursor = p.NextCursor
	}
	if !reflect.DeepEqual(sorted(ids), []string{"t", "u"}) {
		t.Fatalf("paged sessions = %v", ids)
	}

	eventCursor := cursors[0]
	first := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(1)})
	sessionCursor := *first.NextCursor
	f.live(hdr("unrelated", 3), texts("nothing to see"))
	if _, err := f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "t", Query: "needle", Limit: intp(1), Cursor: &eventCursor}); err != nil {
		t.Errorf("an unrelated session staled the event cursor: %v", err)
	}
	_, err := f.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(1), Cursor: &sessionCursor})
	qe := wantCode(t, err, sessionquery.CodeStaleCursor)
	if qe.Message != "session-search cursor is stale because its relevant corpus changed" {
		t.Errorf("message = %q", qe.Message)
	}
	_, err = f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "t", Query: "other", Limit: intp(1), Cursor: &eventCursor})
	wantCode(t, err, sessionquery.CodeInvalidCursor)
	_, err = f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "t", Query: "needle", Limit: intp(2), Cursor: &eventCursor})
	wantCode(t, err, sessionquery.CodeInvalidCursor)
	if _, err := target.Append(session.TypeUserMessage, userMsg("more")); err != nil {
		t.Fatal(err)
	}
	_, err = f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "t", Query: "needle", Limit: intp(1), Cursor: &eventCursor})
	wantCode(t, err, sessionquery.CodeStaleCursor)

	// A forged offset beyond a safe integer is invalid, not stale.
	raw, _ := base64.RawURLEncoding.DecodeString(eventCursor)
	forged := strings.Replace(string(raw), `"offset":1`, `"offset":1e100`, 1)
	bad := base64.RawURLEncoding.EncodeToString([]byte(forged))
	_, err = f.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: "t", Query: "needle", Limit: intp(1), Cursor: &bad})
	wantCode(t, err, sessionquery.CodeInvalidCursor)
}

func TestMountingAndUnmountingPersistenceStalesSessionCursors(t *testing.T) {
	f := newFixture(t)
	f.live(hdr("a", 1), texts("needle a"))
	f.live(hdr("b", 2), texts("needle b"))
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(1)})
	again := newFakePersistence()
	unmount := f.svc.Mount(again)
	unmount()
	_, err := f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(1), Cursor: p.NextCursor})
	wantCode(t, err, sessionquery.CodeStaleCursor)
}

func TestCursorsDoNotSurviveAReopen(t *testing.T) {
	f := newFixture(t)
	f.persist(hdr("a", 1), texts("needle a"))
	f.persist(hdr("b", 2), texts("needle b"))
	p := f.sessions(sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(1)})
	f.ix.Close()
	f.ix = f.newIndex(f.cfg)
	_, err := f.ix.SearchSessions(context.Background(), sessionquery.SessionSearchRequest{Query: "needle", Limit: intp(1), Cursor: p.NextCursor})
	wantCode(t, err, sessionquery.CodeInvalidCursor)
}

func distinct(s []int) bool {
	seen := map[int]bool{}
	for _, v := range s {
		if seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}
