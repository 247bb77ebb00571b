package sessionquery

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// scanEngine is a full-text provider built only from the service's exact
// reads (FilterSessions, then FilterEvents with a literal text clause), so
// the security tests exercise the real service over real logs whatever FTS
// engine is mounted in production. It returns one page per request.
type scanEngine struct{ svc *sq.Service }

func (e scanEngine) SearchSessions(ctx context.Context, req sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
	records, err := e.svc.FilterSessions(ctx, req.SessionFilters)
	if err != nil {
		return sq.SessionSearchPage{}, err
	}
	page := sq.SessionSearchPage{Items: []sq.SessionHit{}}
	for _, r := range records {
		docs, err := e.svc.FilterEvents(ctx, r.Header.ID, append(sq.CopyEventFilters(req.EventFilters), sq.EventFilter{Kind: sq.KindText, Text: req.Query}))
		if err != nil {
			return sq.SessionSearchPage{}, err
		}
		if len(docs) > 0 {
			page.Items = append(page.Items, sq.SessionHit{SessionRecord: r, BestMatch: sq.EventHit{EventRecord: docs[0].EventRecord, Snippet: docs[0].Text}})
		}
	}
	return page, nil
}

func (e scanEngine) SearchEvents(ctx context.Context, req sq.EventSearchRequest) (sq.EventSearchPage, error) {
	records, err := e.svc.FilterSessions(ctx, []sq.SessionFilter{{Kind: sq.KindID, Values: []string{req.SessionID}}})
	if err != nil {
		return sq.EventSearchPage{}, err
	}
	if len(records) != 1 {
		return sq.EventSearchPage{}, sq.Errorf(sq.CodeSessionNotFound, `session "%s" not found`, req.SessionID)
	}
	docs, err := e.svc.FilterEvents(ctx, req.SessionID, append(sq.CopyEventFilters(req.Filters), sq.EventFilter{Kind: sq.KindText, Text: req.Query}))
	if err != nil {
		return sq.EventSearchPage{}, err
	}
	page := sq.EventSearchPage{Items: []sq.EventHit{}, Session: records[0].Header}
	for _, d := range docs {
		page.Items = append(page.Items, sq.EventHit{EventRecord: d.EventRecord, Snippet: d.Text})
	}
	return page, nil
}

func (scanEngine) Close() error { return nil }

// corpusFixture is a real service over real JSONL logs in a temporary
// sessions root, plus a live caller in workspace ws. The hidden sessions
// live in a same-named workspace elsewhere, behind a symlink to ws, under
// ws with a trailing slash and under a case variant of ws.
type corpusFixture struct {
	ws, other, link string
	svc             *sq.Service
	caller          *session.Live
	h               *harness
}

// hiddenIDs and hiddenText must never appear in a tool's output.
var (
	hiddenIDs  = []string{"twin", "linked", "slashed", "upper", "twin-root"}
	hiddenText = "secret"
)

func newCorpusFixture(t *testing.T, engine func(*sq.Service) sq.SearchEngine) *corpusFixture {
	t.Helper()
	root := t.TempDir()
	fx := &corpusFixture{
		ws:    filepath.Join(root, "a", "proj"),
		other: filepath.Join(root, "b", "proj"),
		link:  filepath.Join(root, "link"),
	}
	for _, d := range []string{fx.ws, fx.other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(fx.ws, fx.link); err != nil {
		t.Fatal(err)
	}
	st := store.New(filepath.Join(root, "sessions"), store.Options{Log: slog.New(slog.DiscardHandler)})
	// persist writes a log of alternating user and assistant messages; a
	// text starting with "title:" becomes a session/title event instead.
	persist := func(h session.Header, texts ...string) {
		t.Helper()
		var events []session.Event
		for i, text := range texts {
			switch {
			case strings.HasPrefix(text, "title:"):
				events = append(events, ev(i, session.TypeSessionTitle, session.SessionTitle{
					Title: strings.TrimPrefix(text, "title:"), MessageSeqs: []int{0}, Source: json.RawMessage(`{"kind":"fallback"}`)}))
			case i%2 == 0:
				events = append(events, ev(i, session.TypeUserMessage, userMsg(text)))
			default:
				events = append(events, ev(i, session.TypeAssistantMessage, assistantMsg(text)))
			}
		}
		w, err := st.Create(h, events)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	persist(hdr("mine", 10, fx.ws, ""), "needle in mine", "reply in mine", "title:Needle hunt")
	persist(hdr("mine-child", 11, fx.ws, "mine"), "needle in the child")
	persist(hdr("twin-root", 12, fx.other, ""), "secret root text")
	persist(hdr("twin", 13, fx.other, "twin-root"), "needle secret twin text", "title:Twin secret")
	persist(hdr("twin-child", 14, fx.ws, "twin"), "needle under a hidden parent")
	persist(hdr("linked", 15, fx.link, ""), "needle secret linked text")
	persist(hdr("slashed", 16, fx.ws+"/", ""), "needle secret slashed text")
	persist(hdr("upper", 17, filepath.Join(root, "a", "PROJ"), ""), "needle secret upper text")

	fx.caller = session.NewLive(hdr("caller", 20, fx.ws, ""), []session.Event{
		ev(0, session.TypeTurnStart, session.TurnStart{Turn: 1}),
		ev(1, session.TypeUserMessage, userMsg("needle in an earlier prompt")),
		ev(2, session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1}),
		ev(3, session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c", Name: ToolEventSearch, Arguments: `{"query":"needle"}`}),
	}, session.LiveOptions{})
	fx.svc = realService(t, fx.caller)
	unmount := fx.svc.Mount(sq.NewStorePersistence(st))
	t.Cleanup(unmount)
	if engine != nil {
		fx.svc.SetEngine(engine(fx.svc))
	}
	fx.h = newHarness(t, fx.svc, DefaultConfig())
	return fx
}

func (fx *corpusFixture) run(t *testing.T, tool, args string) tools.Result {
	t.Helper()
	return fx.h.run(context.Background(), fx.caller, tool, args)
}

func noLeak(t *testing.T, where string, r tools.Result) {
	t.Helper()
	text := outcomeOf(t, r).Text
	mustNotContain(t, where, text, hiddenText)
	for _, id := range hiddenIDs {
		for _, line := range strings.Split(text, "\n") {
			for _, field := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '|' || r == ',' }) {
				if field == id {
					t.Fatalf("%s shows hidden id %q:\n%s", where, id, text)
				}
			}
		}
	}
}

func scanEngineFor(svc *sq.Service) sq.SearchEngine { return scanEngine{svc} }

func TestForeignNonexistentAndAliasedTargetsAreDeniedIdentically(t *testing.T) {
	testTargetsDeniedIdentically(t, scanEngineFor)
}

func testTargetsDeniedIdentically(t *testing.T, engine func(*sq.Service) sq.SearchEngine) {
	fx := newCorpusFixture(t, engine)
	for _, tc := range []struct{ tool, args string }{
		{ToolEventSearch, `{"query":"needle","session_id":%q}`},
		{ToolSessionTrace, `{"session_id":%q}`},
		{ToolEventTrace, `{"session_id":%q,"seq":0}`},
		{ToolEventRead, `{"session_id":%q,"seq":0,"after":5}`},
	} {
		var first *tools.Result
		for _, target := range []string{"twin", "linked", "slashed", "upper", "no-such-session", "twin-root"} {
			args := strings.Replace(tc.args, "%q", `"`+target+`"`, 1)
			res := fx.run(t, tc.tool, args)
			expectError(t, res, CodeUnauthorized, msgUnauthorized)
			mustNotContain(t, tc.tool, outcomeOf(t, res).Text, target, `session "`)
			if first == nil {
				first = &res
				continue
			}
			if outcomeOf(t, res) != outcomeOf(t, *first) || *res.Error != *first.Error {
				t.Fatalf("%s: %s differs from the first denial", tc.tool, target)
			}
		}
		// The same call on a session of the workspace succeeds.
		if o := outcomeOf(t, fx.run(t, tc.tool, strings.Replace(tc.args, "%q", `"mine"`, 1))); o.IsError {
			t.Fatalf("%s on mine: %s", tc.tool, o.Text)
		}
	}
	if fx.h.log.count() != 0 {
		t.Fatalf("denials were logged: %s", fx.h.log.text())
	}
}

func TestSessionSearchOverRealLogsShowsOnlyTheWorkspace(t *testing.T) {
	testSearchShowsOnlyTheWorkspace(t, scanEngineFor)
}

func testSearchShowsOnlyTheWorkspace(t *testing.T, engine func(*sq.Service) sq.SearchEngine) {
	fx := newCorpusFixture(t, engine)
	res := fx.run(t, ToolSessionSearch, `{"query":"needle"}`)
	o := outcomeOf(t, res)
	if o.IsError {
		t.Fatal(o.Text)
	}
	noLeak(t, "session_search", res)
	mustContain(t, "output", o.Text, "Session search results (3):", "Session mine — Needle hunt", "Session mine-child — untitled",
		"Session twin-child — untitled", "   Parent: [outside workspace]", "   Parent: mine\n", "   Availability: persisted")
	mustNotContain(t, "output", o.Text, "Session caller")
}

func TestForeignParentFiltersAreByteIdenticalToNoSuchIDs(t *testing.T) {
	testForeignParentsChangeNothing(t, scanEngineFor)
}

func testForeignParentsChangeNothing(t *testing.T, engine func(*sq.Service) sq.SearchEngine) {
	fx := newCorpusFixture(t, engine)
	pairs := [][2]string{
		{`{"query":"needle","parent_session_ids":["mine"]}`, `{"query":"needle","parent_session_ids":["twin","mine","linked","no-such","twin"]}`},
		{`{"query":"needle","parent_session_ids":["no-such"]}`, `{"query":"needle","parent_session_ids":["twin"]}`},
		{`{"query":"needle","include_root_sessions":true}`, `{"query":"needle","parent_session_ids":["twin-root","upper"],"include_root_sessions":true}`},
	}
	for _, p := range pairs {
		a, b := fx.run(t, ToolSessionSearch, p[0]), fx.run(t, ToolSessionSearch, p[1])
		if outcomeOf(t, a) != outcomeOf(t, b) {
			t.Fatalf("%s\n%s\n---\n%s\n%s", p[0], outcomeOf(t, a).Text, p[1], outcomeOf(t, b).Text)
		}
		noLeak(t, p[1], b)
	}
	if o := outcomeOf(t, fx.run(t, ToolSessionSearch, pairs[0][0])); !strings.Contains(o.Text, "Session mine-child") {
		t.Fatalf("parent filter found nothing:\n%s", o.Text)
	}
}

func TestLineageOverRealLogsStopsAtTheWorkspaceBoundary(t *testing.T) {
	fx := newCorpusFixture(t, nil)
	res := fx.run(t, ToolSessionTrace, `{"session_id":"twin-child"}`)
	noLeak(t, "session_trace", res)
	mustContain(t, "output", outcomeOf(t, res).Text, "Session twin-child — untitled\n", "Availability: persisted\n",
		"Ancestors (nearest first):\n- [outside workspace boundary]\n\nDescendants:\n- none")
	res = fx.run(t, ToolSessionTrace, `{"session_id":"mine"}`)
	mustContain(t, "output", outcomeOf(t, res).Text, "- none (target is a root session)", "Descendants:\n- mine-child — untitled | 1970-01-01T00:00:00.011Z | persisted")
}

func TestCurrentSessionSearchOverTheRealServiceExcludesTheRunningStep(t *testing.T) {
	testSelfSearchExcludesTheRunningStep(t, scanEngineFor)
}

func testSelfSearchExcludesTheRunningStep(t *testing.T, engine func(*sq.Service) sq.SearchEngine) {
	fx := newCorpusFixture(t, engine)
	res := fx.run(t, ToolEventSearch, `{"query":"needle"}`)
	expectText(t, res, "Session caller — untitled\n\nEvent search results (1):\n1. seq 1 | user/message | current | 1970-01-01T00:00:01.001Z\n   Snippet: needle in an earlier prompt")
}

func TestSearchWithoutAnEngineIsReportedAsDisabled(t *testing.T) {
	fx := newCorpusFixture(t, nil)
	expectError(t, fx.run(t, ToolSessionSearch, `{"query":"needle"}`), sq.CodeSearchDisabled, "session search is disabled in this deployment")
	expectError(t, fx.run(t, ToolEventSearch, `{"query":"needle","session_id":"mine"}`), sq.CodeSearchDisabled, "session search is disabled in this deployment")
}

// TestRenderedOutputsOnARealCorpus pins what the model reads from each tool
// over the real service and real logs (reviewed by hand; regenerate with
// go test -update).
func TestRenderedOutputsOnARealCorpus(t *testing.T) {
	testRenderedOutputs(t, scanEngineFor, "testdata/render")
}

func testRenderedOutputs(t *testing.T, engine func(*sq.Service) sq.SearchEngine, dir string) {
	fx := newCorpusFixture(t, engine)
	g := goldie.New(t, goldie.WithFixtureDir(dir))
	for _, tc := range []struct{ name, tool, args string }{
		{"session_search", ToolSessionSearch, `{"query":"needle"}`},
		{"session_search_empty", ToolSessionSearch, `{"query":"needle","parent_session_ids":["twin"]}`},
		{"session_event_search", ToolEventSearch, `{"query":"mine","session_id":"mine"}`},
		{"session_event_search_self", ToolEventSearch, `{"query":"needle"}`},
		{"session_trace", ToolSessionTrace, `{"session_id":"mine"}`},
		{"session_trace_boundary", ToolSessionTrace, `{"session_id":"twin-child"}`},
		{"session_event_trace", ToolEventTrace, `{"session_id":"mine","seq":1}`},
		{"session_event_read", ToolEventRead, `{"session_id":"mine","seq":1,"before":1}`},
		{"unauthorized", ToolEventRead, `{"session_id":"twin","seq":0}`},
	} {
		g.Assert(t, tc.name, []byte(outcomeOf(t, fx.run(t, tc.tool, tc.args)).Text+"\n"))
	}
}

// TestCallerThroughASymlinkSeesBothForms pins the workspace rule shared with
// the CLI, ACP and the TUI (session.Workspace): a caller whose log stores a
// symlinked path sees the sessions stored under that exact path and under
// the real directory, and still none of the other spellings.
func TestCallerThroughASymlinkSeesBothForms(t *testing.T) {
	fx := newCorpusFixture(t, scanEngineFor)
	caller := session.NewLive(hdr("via-link", 21, fx.link, ""), []session.Event{
		ev(0, session.TypeTurnStart, session.TurnStart{Turn: 1}),
		ev(1, session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1}),
	}, session.LiveOptions{})
	res := fx.h.run(context.Background(), caller, ToolSessionSearch, `{"query":"needle"}`)
	text := outcomeOf(t, res).Text
	mustContain(t, "search", text, "mine", "linked")
	mustNotContain(t, "search", text, "slashed", "upper", "twin text")
	for _, id := range []string{"linked", "mine"} {
		res := fx.h.run(context.Background(), caller, ToolSessionTrace, `{"session_id":"`+id+`"}`)
		mustContain(t, "trace "+id, outcomeOf(t, res).Text, "Session "+id)
	}
	expectError(t, fx.h.run(context.Background(), caller, ToolSessionTrace, `{"session_id":"slashed"}`), CodeUnauthorized, msgUnauthorized)
}
