package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// baseMs is a fixed session time: 2025-06-15T10:00:00Z.
const baseMs = 1_749_981_600_000

// logBuilder writes session logs into a sandbox's store.
type logBuilder struct {
	t  *testing.T
	st *store.Store
}

func (s *sandbox) logs() logBuilder {
	return logBuilder{t: s.t, st: store.New(filepath.Join(s.home, "sessions"), store.Options{})}
}

// turn is one completed turn: a prompt, a reply, optionally a tool call
// and its result.
type turn struct {
	prompt, reply string
	tool, args    string
	result        string
}

// add stores a session of the given turns, with a fallback title from the
// first prompt; minute offsets its creation time from baseMs.
func (b logBuilder) add(h session.Header, minute int, turns ...turn) {
	b.t.Helper()
	h.Version = session.FormatVersion
	h.CreatedAt = baseMs + int64(minute)*60_000
	var events []session.Event
	now := h.CreatedAt
	add := func(typ string, data any, opts ...session.AppendOption) {
		now += 1000
		e := session.Event{Type: typ, Seq: len(events), Time: now, Data: session.MustMarshal(data)}
		if session.IsSurfaceType(typ) {
			e.SurfaceOp = session.OpAppend
		}
		for _, o := range opts {
			o(&e)
		}
		events = append(events, e)
	}
	for i, tr := range turns {
		add(session.TypeTurnStart, session.TurnStart{Turn: i + 1})
		add(session.TypeUserMessage, session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(tr.prompt)}, Source: session.UserSource, ID: "u"})
		add(session.TypeStepStart, session.StepBoundary{Turn: i})
		add(session.TypeAssistantMessage, session.AssistantMessage{Turn: i, Message: session.Message{Role: session.RoleAssistant,
			Content: []session.ContentBlock{session.TextBlock(tr.reply)}, Source: session.ModelSource("fake", "m"), ID: "a"}})
		if tr.tool != "" {
			add(session.TypeToolCall, session.ToolCall{Turn: i, CallID: "c", Name: tr.tool, Arguments: tr.args})
			add(session.TypeToolResult, session.ToolResult{Turn: i, Message: session.Message{Role: session.RoleUser,
				Content: []session.ContentBlock{session.ToolResultBlock("c", []session.ContentBlock{session.TextBlock(tr.result)}, false)},
				Source:  session.ToolSource("c"), ID: "r"}})
		}
		add(session.TypeStepEnd, session.StepBoundary{Turn: i})
		add(session.TypeTurnEnd, session.TurnEnd{Turn: i, Reason: session.TurnEndReason{Kind: session.EndCompleted}})
	}
	if len(turns) > 0 {
		add(session.TypeSessionTitle, session.SessionTitle{Title: session.FallbackTitle(turns[0].prompt), MessageSeqs: []int{1}, Source: []byte(`{"kind":"fallback"}`)})
	}
	w, err := b.st.Create(h, events)
	if err != nil {
		b.t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.t.Fatal(err)
	}
}

func (s *sandbox) header(id string) session.Header {
	return session.Header{ID: id, Cwd: &s.cwd}
}

func elsewhere(id string) session.Header {
	cwd := "/somewhere/else"
	return session.Header{ID: id, Cwd: &cwd}
}

func wantOK(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// populate writes three sessions: two here, one elsewhere.
func populate(s *sandbox) {
	l := s.logs()
	l.add(s.header("older"), 0, turn{prompt: "fix the flaky cache test", reply: "the cache test races on the clock"})
	l.add(s.header("newer"), 10, turn{prompt: "rename parseConfig to loadConfig", reply: "done, parseConfig is gone",
		tool: "bash", args: `{"command":"go test ./..."}`, result: "ok  \tconfig\nFAIL cache test again\n"})
	l.add(elsewhere("remote"), 5, turn{prompt: "deploy the cache service", reply: "deployed"})
}

func TestSessionsListShowsThisWorkspaceNewestFirst(t *testing.T) {
	s := newSandbox(t)
	populate(s)
	r := s.run("sessions", "list")
	wantOK(t, r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "newer") || !strings.HasPrefix(lines[2], "older") {
		t.Fatalf("list:\n%s", r.stdout)
	}
	if !strings.Contains(lines[1], "Rename parseConfig to loadConfig") && !strings.Contains(lines[1], "rename parseConfig") {
		t.Errorf("title missing: %q", lines[1])
	}
	if f := strings.Fields(lines[1]); f[3] != "9" {
		t.Errorf("event count = %q in %q, want 9", f[3], lines[1])
	}
	all := s.run("sessions", "list", "--all-workspaces")
	wantOK(t, all)
	if !strings.Contains(all.stdout, "remote") || !strings.Contains(all.stdout, "/somewhere/else") || !strings.Contains(all.stdout, "WORKSPACE") {
		t.Errorf("--all-workspaces:\n%s", all.stdout)
	}
	js := s.run("sessions", "list", "--json")
	wantOK(t, js)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(js.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0]["id"] != "newer" || rows[0]["events"] != 9.0 || rows[0]["createdAt"] != "2025-06-15T10:10:00.000Z" {
		t.Errorf("json = %v", rows)
	}
	limited := s.run("sessions", "list", "--limit", "1")
	wantOK(t, limited)
	if !strings.Contains(limited.stderr, "1 older session") {
		t.Errorf("--limit 1:\n%s", limited.stdout)
	}
}

func TestSessionsListSaysWhenAWorkspaceHasNone(t *testing.T) {
	s := newSandbox(t)
	s.logs().add(elsewhere("remote"), 0, turn{prompt: "hello", reply: "hi"})
	r := s.run("sessions", "list")
	wantOK(t, r)
	if r.stdout != "" || !strings.Contains(r.stderr, "No sessions in") || !strings.Contains(r.stderr, "--all-workspaces") {
		t.Errorf("stdout = %q", r.stdout)
	}
	if r := s.run("sessions", "list", "--limit", "-1"); r.code != exitUsage {
		t.Errorf("--limit -1 exit %d", r.code)
	}
}

func TestSessionsSearchGroupsBySessionWithSnippets(t *testing.T) {
	s := newSandbox(t)
	populate(s)
	r := s.run("sessions", "search", "cache", "test")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "older") || !strings.Contains(r.stdout, "newer") || strings.Contains(r.stdout, "remote") {
		t.Fatalf("search:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "seq ") || !strings.Contains(r.stdout, "cache test") {
		t.Errorf("no snippet:\n%s", r.stdout)
	}
	all := s.run("sessions", "search", "cache", "--all-workspaces", "--json")
	wantOK(t, all)
	var hits []struct {
		Session   struct{ ID string } `json:"session"`
		Title     *string             `json:"title"`
		BestMatch struct {
			Seq     int    `json:"seq"`
			Type    string `json:"type"`
			Snippet string `json:"snippet"`
		} `json:"bestMatch"`
	}
	if err := json.Unmarshal([]byte(all.stdout), &hits); err != nil {
		t.Fatalf("%v\n%s", err, all.stdout)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Session.ID)
		if h.Title == nil || h.BestMatch.Snippet == "" {
			t.Errorf("hit without title or snippet: %+v", h)
		}
	}
	if len(ids) != 3 {
		t.Errorf("--all-workspaces found %v", ids)
	}
	typed := s.run("sessions", "search", "cache", "--type", "tool/result", "--json")
	wantOK(t, typed)
	if err := json.Unmarshal([]byte(typed.stdout), &hits); err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Session.ID != "newer" || hits[0].BestMatch.Type != "tool/result" {
		t.Errorf("--type tool/result: %+v", hits)
	}
	// older's events are at 10:00, newer's at 10:10 (UTC).
	since := s.run("sessions", "search", "cache", "--since", "2025-06-15T10:05:00Z")
	wantOK(t, since)
	if strings.Contains(since.stdout, "older") || !strings.Contains(since.stdout, "newer") {
		t.Errorf("--since:\n%s", since.stdout)
	}
	until := s.run("sessions", "search", "cache", "--until", "2025-06-15T10:05:00Z")
	wantOK(t, until)
	if !strings.Contains(until.stdout, "older") || strings.Contains(until.stdout, "newer") {
		t.Errorf("--until:\n%s", until.stdout)
	}
	none := s.run("sessions", "search", "nothing-like-this")
	wantOK(t, none)
	if none.stdout != "" || !strings.Contains(none.stderr, "No sessions match") {
		t.Errorf("no match: %q", none.stdout)
	}
	if r := s.run("sessions", "search", "cache", "--since", "yesterday-ish"); r.code != exitUsage || !strings.Contains(r.stderr, "ISO 8601") {
		t.Errorf("bad --since: exit %d, %q", r.code, r.stderr)
	}
	if r := s.run("sessions", "search", "cache", "--limit", "500"); r.code != exitError || !strings.Contains(r.stderr, "limit") {
		t.Errorf("--limit 500: exit %d, %q", r.code, r.stderr)
	}
}

func TestSessionsSearchRespectsADisabledIndex(t *testing.T) {
	s := newSandbox(t)
	populate(s)
	for _, args := range [][]string{{"sessions", "search", "cache"}, {"index", "status"}, {"index", "rebuild"}} {
		r := s.run(append(args, "--set", "session_query.open_at=never")...)
		if r.code != exitError || !strings.Contains(r.stderr, `open_at is "never"`) {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}
	if r := s.run("sessions", "list", "--set", "session_query.open_at=never"); r.code != 0 {
		t.Errorf("list without the index: %d %s", r.code, r.stderr)
	}
}

func TestParseWhenReadsISODatesAndAges(t *testing.T) {
	now := time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)
	utc := func(s string) float64 {
		tm, _ := time.Parse(time.RFC3339Nano, s)
		return float64(tm.UnixMilli())
	}
	local := func(y, m, d, h, min int) float64 {
		return float64(time.Date(y, time.Month(m), d, h, min, 0, 0, time.Local).UnixMilli())
	}
	tests := []struct {
		in   string
		want float64
	}{
		{"7d", float64(now.Add(-7 * 24 * time.Hour).UnixMilli())},
		{"2w", float64(now.Add(-14 * 24 * time.Hour).UnixMilli())},
		{"12h", float64(now.Add(-12 * time.Hour).UnixMilli())},
		{"90m", float64(now.Add(-90 * time.Minute).UnixMilli())},
		{"1h30m", float64(now.Add(-90 * time.Minute).UnixMilli())},
		{"2025-06-01T08:30:00Z", utc("2025-06-01T08:30:00Z")},
		{"2025-06-01T08:30:00.250+02:00", utc("2025-06-01T06:30:00.250Z")},
		{"2025-06-01", local(2025, 6, 1, 0, 0)},
		{"2025-06-01T08:30", local(2025, 6, 1, 8, 30)},
	}
	for _, tt := range tests {
		got, err := parseWhen(tt.in, now)
		if err != nil || got != tt.want {
			t.Errorf("parseWhen(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "soon", "7y", "-3d", "2025-13-01"} {
		if _, err := parseWhen(bad, now); err == nil {
			t.Errorf("parseWhen(%q) succeeded", bad)
		}
	}
}

func TestSessionsShowPrintsATranscriptAndRawEvents(t *testing.T) {
	s := newSandbox(t)
	populate(s)
	s.logs().add(s.header("hostile"), 20, turn{prompt: "print \x1b[31mred\x1b[0m please", reply: "ok"})
	r := s.run("sessions", "show", "newer")
	wantOK(t, r)
	for _, want := range []string{"Session newer", "You:", "rename parseConfig to loadConfig", "Assistant:", "→ bash", "go test", "← result:", "FAIL cache test again", "── turn 1"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("transcript lacks %q:\n%s", want, r.stdout)
		}
	}
	h := s.run("sessions", "show", "hostile")
	wantOK(t, h)
	if strings.Contains(h.stdout, "\x1b") || !strings.Contains(h.stdout, `\x1b[31mred`) {
		t.Errorf("control characters were not escaped:\n%q", h.stdout)
	}
	ev := s.run("sessions", "show", "newer", "--events")
	wantOK(t, ev)
	if !strings.Contains(ev.stdout, "SURFACE") || !strings.Contains(ev.stdout, "user/message") || !strings.Contains(ev.stdout, "current") || !strings.Contains(ev.stdout, "log-only") {
		t.Errorf("--events:\n%s", ev.stdout)
	}
	js := s.run("sessions", "show", "newer", "--events", "--json")
	wantOK(t, js)
	var events []struct {
		Seq     int             `json:"seq"`
		Surface string          `json:"surface"`
		Event   json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &events); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, events[1].Event); err != nil {
		t.Fatal(err)
	}
	if len(events) != 9 || events[1].Surface != "current" || !strings.HasPrefix(compact.String(), `{"type":"user/message","seq":1,`) {
		t.Errorf("--events --json: %d events, event 1 %s %s", len(events), events[1].Surface, compact.String())
	}
	if r := s.run("sessions", "show", "rem"); r.code != exitError || !strings.Contains(r.stderr, "--all-workspaces") {
		t.Errorf("a prefix of another workspace's session: exit %d %q", r.code, r.stderr)
	}
	if r := s.run("sessions", "show", "remote", "--all-workspaces"); r.code != 0 || !strings.Contains(r.stdout, "deploy the cache service") {
		t.Errorf("--all-workspaces: exit %d %q", r.code, r.stderr)
	}
	if r := s.run("sessions", "show", "missing"); r.code != exitError || !strings.Contains(r.stderr, `no session id starts with "missing"`) {
		t.Errorf("missing: exit %d %q", r.code, r.stderr)
	}
}

func TestSessionsTraceShowsTheLineage(t *testing.T) {
	s := newSandbox(t)
	l := s.logs()
	l.add(s.header("root"), 0, turn{prompt: "start here", reply: "ok"})
	child := s.header("child")
	child.ParentSession = session.Ptr("root")
	l.add(child, 5, turn{prompt: "branch one", reply: "ok"})
	grand := s.header("grandchild")
	grand.ParentSession = session.Ptr("child")
	l.add(grand, 9, turn{prompt: "deeper", reply: "ok"})
	sibling := s.header("sibling")
	sibling.ParentSession = session.Ptr("root")
	l.add(sibling, 7, turn{prompt: "branch two", reply: "ok"})
	r := s.run("sessions", "trace", "child")
	wantOK(t, r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var got []string
	for _, line := range lines {
		got = append(got, strings.Fields(line)[0])
	}
	if !reflect.DeepEqual(got, []string{"root", "*", "grandchild"}) || !strings.HasPrefix(lines[1], "  * child") || !strings.HasPrefix(lines[2], "    grandchild") {
		t.Errorf("trace:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "Start here") && !strings.Contains(r.stdout, "start here") {
		t.Errorf("titles missing:\n%s", r.stdout)
	}
	js := s.run("sessions", "trace", "root", "--json")
	wantOK(t, js)
	var tr struct {
		Complete    bool `json:"complete"`
		Descendants []struct {
			Session struct {
				Header struct{ ID string } `json:"header"`
			} `json:"session"`
		} `json:"descendants"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &tr); err != nil {
		t.Fatal(err)
	}
	if !tr.Complete || len(tr.Descendants) != 2 || tr.Descendants[0].Session.Header.ID != "child" {
		t.Errorf("json = %+v", tr)
	}
}

func TestSessionsShowNumbersTurnsFromOneAndHidesTheRuntimeContext(t *testing.T) {
	s, _ := runSandbox(t, fakellm.Reply{Text: "hello back"})
	if r := s.exec(execOptions{}, "run", "hello"); r.code != exitOK {
		t.Fatalf("run: exit %d stderr %q", r.code, r.stderr)
	}
	entries, err := store.New(filepath.Join(s.home, "sessions"), store.Options{}).List(t.Context())
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one session: %d (%v)", len(entries), err)
	}
	r := s.exec(execOptions{}, "sessions", "show", entries[0].Header.ID)
	wantOK(t, execResultAsResult(r))
	if !strings.Contains(r.stdout, "── turn 1 ·") || strings.Contains(r.stdout, "── turn 2") {
		t.Errorf("the first turn is not turn 1:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "Context (") || strings.Contains(r.stdout, "Workspace:") {
		t.Errorf("the runtime context is shown:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "You:") || !strings.Contains(r.stdout, "hello back") {
		t.Errorf("the conversation is missing:\n%s", r.stdout)
	}
}

func execResultAsResult(r execResult) result {
	return result(r)
}

func TestEveryJSONTimeIsRFC3339WithMilliseconds(t *testing.T) {
	s := newSandbox(t)
	populate(s)
	const created = "2025-06-15T10:10:00.000Z" // "newer", baseMs + 10 min
	var hits []struct {
		Session   struct{ CreatedAt any }
		BestMatch struct{ Time any }
	}
	r := s.run("sessions", "search", "--json", "parseConfig")
	wantOK(t, r)
	if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil || len(hits) != 1 {
		t.Fatalf("search --json = %q (%v)", r.stdout, err)
	}
	if hits[0].Session.CreatedAt != created {
		t.Errorf("search --json createdAt = %v", hits[0].Session.CreatedAt)
	}
	if at, ok := hits[0].BestMatch.Time.(string); !ok || !strings.HasPrefix(at, "2025-06-15T10:1") || !strings.HasSuffix(at, "Z") || len(at) != len(created) {
		t.Errorf("search --json bestMatch.time = %v", hits[0].BestMatch.Time)
	}
	var tr struct {
		Target struct{ Header struct{ CreatedAt any } }
		Root   struct{ Header struct{ CreatedAt any } }
	}
	r = s.run("sessions", "trace", "--json", "newer")
	wantOK(t, r)
	if err := json.Unmarshal([]byte(r.stdout), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Target.Header.CreatedAt != created || tr.Root.Header.CreatedAt != created {
		t.Errorf("trace --json createdAt = %v, root %v", tr.Target.Header.CreatedAt, tr.Root.Header.CreatedAt)
	}
}
