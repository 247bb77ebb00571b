package sessionquery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

func live(h session.Header) *session.Live { return liveWith(h) }

func TestLineageRendersBranchingDescendantsAndPrunesHiddenSubtrees(t *testing.T) {
	svc := realService(t,
		live(hdr("caller", 1, workspace, "")),
		live(hdr("branch-target", 20, workspace, "")),
		live(hdr("branch-first", 30, workspace, "branch-target")),
		live(hdr("branch-nested", 40, workspace, "branch-first")),
		live(hdr("branch-hidden", 50, elsewhere, "branch-first")),
		live(hdr("hidden-grandchild", 60, workspace, "branch-hidden")),
		live(hdr("branch-last", 70, workspace, "branch-target")),
	)
	f := spy(t, svc)
	h := newHarness(t, f, DefaultConfig())
	res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionTrace, `{"session_id":"branch-target"}`)
	expectText(t, res, `Session branch-target — untitled
Created: 1970-01-01T00:00:00.020Z
Availability: live

Ancestors (nearest first):
- none (target is a root session)

Descendants:
- branch-first — untitled | 1970-01-01T00:00:00.030Z | live
  - branch-nested — untitled | 1970-01-01T00:00:00.040Z | live
  - [outside workspace subtree]
- branch-last — untitled | 1970-01-01T00:00:00.070Z | live`)
	titles := f.callsOf("ReadTitleSnapshots")
	if len(titles) != 1 || !slices.Equal(titles[0].arg.([]string), []string{"branch-target", "branch-first", "branch-nested", "branch-last"}) {
		t.Fatalf("title batches = %+v", titles)
	}
	if want := []string{"FilterSessions", "TraceSession", "ReadTitleSnapshots"}; !slices.Equal(f.names(), want) {
		t.Fatalf("calls = %v, want %v", f.names(), want)
	}
}

func TestLineageRedactsHiddenAncestorsAndChildren(t *testing.T) {
	svc := realService(t,
		live(hdr("caller", 1, workspace, "")),
		live(hdr("hidden-root", 2, elsewhere, "")),
		live(hdr("hidden-parent", 3, elsewhere, "hidden-root")),
		live(hdr("target", 4, workspace, "hidden-parent")),
		live(hdr("visible-child", 5, workspace, "target")),
		live(hdr("hidden-child", 6, elsewhere, "target")),
		live(hdr("visible-grandchild", 7, workspace, "hidden-child")),
	)
	f := spy(t, svc)
	h := newHarness(t, f, DefaultConfig())
	o := outcomeOf(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionTrace, `{"session_id":"target"}`))
	if o.IsError {
		t.Fatal(o.Text)
	}
	mustContain(t, "output", o.Text, "Session target — untitled", "- visible-child — untitled", "- [outside workspace boundary]", "- [outside workspace subtree]")
	mustNotContain(t, "output", o.Text, "hidden-root", "hidden-parent", "hidden-child", "visible-grandchild", "none (target is a root session)")
	for _, c := range f.callsOf("ReadTitleSnapshots") {
		for _, id := range c.arg.([]string) {
			if strings.Contains(id, "hidden") || id == "visible-grandchild" {
				t.Fatalf("title requested for hidden id %s", id)
			}
		}
	}
}

func TestLineageShowsAuthorizedAncestorsAndHidesAnUnresolvedParent(t *testing.T) {
	svc := realService(t,
		live(hdr("caller", 1, workspace, "")),
		live(hdr("ancestor", 2, workspace, "gone-parent-id")),
		live(hdr("target", 3, workspace, "ancestor")),
	)
	h := newHarness(t, svc, DefaultConfig())
	o := outcomeOf(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionTrace, `{"session_id":"target"}`))
	mustContain(t, "output", o.Text, "Ancestors (nearest first):\n- ancestor — untitled | 1970-01-01T00:00:00.002Z | live\n- [outside workspace boundary]\n\nDescendants:\n- none")
	mustNotContain(t, "output", o.Text, "gone-parent-id")
}

func TestLineageOfACallerWithoutWorkspace(t *testing.T) {
	caller := callerLive("caller", "")
	svc := realService(t, caller, live(hdr("other", 2, "", "")))
	h := newHarness(t, svc, DefaultConfig())
	expectText(t, h.run(context.Background(), caller, ToolSessionTrace, `{}`), `Session caller — untitled
Created: 1970-01-01T00:00:00.001Z
Availability: live

Ancestors (nearest first):
- none (target is a root session)

Descendants:
- none`)
	expectError(t, h.run(context.Background(), caller, ToolSessionTrace, `{"session_id":"other"}`), CodeUnauthorized, msgUnauthorized)
}

func TestLineageShowsUnavailableTargetAndTheCallersOwnDescendant(t *testing.T) {
	f := newFake(t)
	f.filterSessions = func(_ context.Context, filters []sq.SessionFilter) ([]sq.SessionRecord, error) {
		return []sq.SessionRecord{{Header: hdr("target", 5, workspace, "")}}, nil
	}
	f.traceSession = func(context.Context, string) (sq.LineageTrace, error) {
		target := sq.SessionRecord{Header: hdr("target", 5, workspace, "")}
		return sq.LineageTrace{
			Target:      target,
			Ancestors:   []sq.SessionRecord{},
			Descendants: []sq.LineageNode{{Session: sq.SessionRecord{Header: hdr("caller", 6, workspace, "target"), Persisted: true}}},
			Complete:    true,
			Root:        &target,
		}, nil
	}
	f.readTitleSnapshots = func(_ context.Context, ids []string) ([]sq.TitleResult, error) {
		return []sq.TitleResult{fulfilled(hdr("target", 5, workspace, ""), ""), fulfilled(hdr("caller", 6, workspace, "target"), "Me")}, nil
	}
	h := newHarness(t, f, DefaultConfig())
	caller := liveWith(hdr("caller", 6, workspace, "target"))
	o := outcomeOf(t, h.run(context.Background(), caller, ToolSessionTrace, `{"session_id":"target"}`))
	mustContain(t, "output", o.Text, "Availability: unavailable\n", "\n- caller — Me | 1970-01-01T00:00:00.006Z | persisted")
}

func TestAnOutsideAncestorCycleIsReportedWithoutIDs(t *testing.T) {
	svc := realService(t,
		live(hdr("caller", 1, workspace, "")),
		live(hdr("target", 2, workspace, "cycle-secret-a")),
		live(hdr("cycle-secret-a", 3, elsewhere, "cycle-secret-b")),
		live(hdr("cycle-secret-b", 4, elsewhere, "cycle-secret-a")),
	)
	h := newHarness(t, svc, DefaultConfig())
	res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionTrace, `{"session_id":"target"}`)
	expectError(t, res, sq.CodeInvalidLineage, "session lineage is invalid")
	mustContain(t, "log", h.log.text(), "cycle-secret-a")
}

func TestLineageFailuresAreSanitized(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code string
		msg  string
	}{
		{sq.Wrap(sq.CodeSourceConflict, errors.New("cause"), `session source headers conflict for session "lineage-secret"`), CodeToolFailed, msgToolFailed},
		{sq.Errorf(sq.CodePersistenceFailed, "session persistence listing failed: lineage-secret"), sq.CodePersistenceFailed, "session history storage is unavailable"},
		{errors.New("plain lineage-secret"), CodeToolFailed, msgToolFailed},
	} {
		f := newFake(t)
		f.traceSession = func(context.Context, string) (sq.LineageTrace, error) { return sq.LineageTrace{}, tc.err }
		h := newHarness(t, f, DefaultConfig())
		res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionTrace, `{}`)
		expectError(t, res, tc.code, tc.msg)
		mustContain(t, "log", h.log.text(), "tool-session-query: session lineage trace failed: ", "lineage-secret")
	}
}

func TestDeepLineageRendersIteratively(t *testing.T) {
	const depth = 3000
	// Build the chain bottom-up so constructing the fixture needs no
	// recursion either.
	var node []sq.LineageNode
	for i := depth; i >= 1; i-- {
		node = []sq.LineageNode{{Session: sq.SessionRecord{Header: hdr(fmt.Sprintf("deep-%d", i), int64(i), workspace, ""), Live: true}, Descendants: node}}
	}
	f := newFake(t)
	f.traceSession = func(context.Context, string) (sq.LineageTrace, error) {
		target := sq.SessionRecord{Header: hdr("caller", 1, workspace, ""), Live: true}
		return sq.LineageTrace{Target: target, Descendants: node, Complete: true, Root: &target}, nil
	}
	f.readTitleSnapshots = func(_ context.Context, ids []string) ([]sq.TitleResult, error) {
		out := make([]sq.TitleResult, len(ids))
		for i, id := range ids {
			out[i] = fulfilled(hdr(id, 0, workspace, ""), "")
		}
		return out, nil
	}
	h := newHarness(t, f, DefaultConfig())
	o := outcomeOf(t, h.run(context.Background(), callerLive("caller", workspace), ToolSessionTrace, `{}`))
	if o.IsError {
		t.Fatal(o.Text)
	}
	mustContain(t, "output", o.Text, "Descendants:\n- deep-1 — ")
	lines := strings.Split(o.Text, "\n")
	last := lines[len(lines)-1]
	if want := strings.Repeat(" ", 2*(depth-1)) + "- deep-3000 — untitled"; !strings.HasPrefix(last, want) {
		t.Fatalf("deepest line starts %q", last[:min(len(last), 40)])
	}
	if ids := f.callsOf("ReadTitleSnapshots")[0].arg.([]string); len(ids) != depth+1 {
		t.Fatalf("title batch of %d ids, want %d", len(ids), depth+1)
	}
}

// relationships is the §4.4.4 example: a user message replaced by an
// assistant message that cites it.
func relationships() *session.Live {
	const t0 = 1784851200000 // 2026-07-24T00:00:00.000Z
	e0 := ev(0, session.TypeUserMessage, userMsg("original"))
	e0.Time = t0
	e1 := ev(1, session.TypeAssistantMessage, assistantMsg("replacement"), session.WithSources(0), session.WithSurface(session.OpReplace(0, 0)))
	e1.Time = t0 + 1
	return liveWith(hdr("relationships", 10, workspace, ""), e0, e1)
}

func TestEventTraceRendersTheRelationships(t *testing.T) {
	svc := realService(t, live(hdr("caller", 1, workspace, "")), relationships())
	h := newHarness(t, svc, DefaultConfig())
	caller := callerLive("caller", workspace)
	expectText(t, h.run(context.Background(), caller, ToolEventTrace, `{"session_id":"relationships","seq":0}`), `Session relationships — untitled
Target: seq 0 | user/message | shadowed | 2026-07-24T00:00:00.000Z
Replaced by: 1
Replacement chain: 1
Events replaced by target: none
Events cited directly as sources: none
Direct derived events: 1`)
	expectText(t, h.run(context.Background(), caller, ToolEventTrace, `{"session_id":"relationships","seq":1}`), `Session relationships — untitled
Target: seq 1 | assistant/message | current | 2026-07-24T00:00:00.001Z
Replaced by: none
Replacement chain: none
Events replaced by target: 0
Events cited directly as sources: 0
Direct derived events: none`)
}

func TestMissingEventsAreReportedWithTheFixedText(t *testing.T) {
	svc := realService(t, live(hdr("caller", 1, workspace, "")), relationships())
	h := newHarness(t, svc, DefaultConfig())
	for _, tool := range []string{ToolEventTrace, ToolEventRead} {
		res := h.run(context.Background(), callerLive("caller", workspace), tool, `{"session_id":"relationships","seq":9}`)
		expectError(t, res, sq.CodeEventNotFound, "session event was not found")
		mustNotContain(t, tool, outcomeOf(t, res).Text, "relationships")
	}
	res := h.run(context.Background(), callerLive("caller", workspace), ToolEventRead, `{"session_id":"relationships","seq":0,"after":51}`)
	expectError(t, res, sq.CodeInvalidWindow, "session event window is invalid")
}

// readSession holds a target whose payload has keys in a non-sorted order,
// HTML-sensitive characters and non-ASCII text, between a semantic and a
// non-semantic neighbour.
func readSession() *session.Live {
	const t0 = 1785987646183 // 2026-08-06T03:40:46.183Z
	before := ev(0, session.TypeUserMessage, userMsg("before semantic text\nsecond line"))
	before.Time = t0
	target := session.Event{Type: session.TypeAssistantMessage, Seq: 1, Time: t0 + 1, SurfaceOp: session.OpAppend,
		Data: json.RawMessage(`{"turn":1,"step":1,"message":{"role":"assistant","id":"a","content":[{"type":"text","text":"target full text <b>&</b> é"}],"source":{"kind":"model","provider":"fake","model":"m"}},"zeta":{},"alpha":[]}`)}
	after := session.Event{Type: "context/message", Seq: 2, Time: t0 + 2, Data: json.RawMessage(`{"text":"after neighbour raw text"}`)}
	return liveWith(hdr("read", 10, workspace, ""), before, target, after)
}

const readTarget = "Session read — untitled\nTarget event seq 1:\n```json\n" + `{
  "type": "assistant/message",
  "seq": 1,
  "time": 1785987646184,
  "data": {
    "turn": 1,
    "step": 1,
    "message": {
      "role": "assistant",
      "id": "a",
      "content": [
        {
          "type": "text",
          "text": "target full text <b>&</b> é"
        }
      ],
      "source": {
        "kind": "model",
        "provider": "fake",
        "model": "m"
      }
    },
    "zeta": {},
    "alpha": []
  },
  "surfaceOp": "append"
}` + "\n```"

func TestEventReadShowsTheStoredEventAndNeighbourSummaries(t *testing.T) {
	svc := realService(t, live(hdr("caller", 1, workspace, "")), readSession())
	h := newHarness(t, svc, DefaultConfig())
	caller := callerLive("caller", workspace)
	const beforeSection = "\n\nBefore:\n- seq 0 | user/message | 2026-08-06T03:40:46.183Z\n  before semantic text\n  second line"
	const afterSection = "\n\nAfter:\n- seq 2 | context/message | 2026-08-06T03:40:46.185Z | (no semantic text)"
	cases := []struct{ args, want string }{
		{`{"session_id":"read","seq":1,"before":1,"after":1}`, readTarget + beforeSection + afterSection},
		{`{"session_id":"read","seq":1}`, readTarget},
		{`{"session_id":"read","seq":1,"after":5}`, readTarget + afterSection},
		{`{"session_id":"read","seq":1,"before":5,"after":0}`, readTarget + beforeSection},
	}
	for _, tc := range cases {
		res := h.run(context.Background(), caller, ToolEventRead, tc.args)
		expectText(t, res, tc.want)
		mustNotContain(t, tc.args, outcomeOf(t, res).Text, "after neighbour raw text", "truncated", `\u003c`)
	}
}

func TestEventReadPassesOnlyTheGivenWindowSides(t *testing.T) {
	svc := realService(t, live(hdr("caller", 1, workspace, "")), readSession())
	f := spy(t, svc)
	h := newHarness(t, f, DefaultConfig())
	h.run(context.Background(), callerLive("caller", workspace), ToolEventRead, `{"session_id":"read","seq":1,"after":1}`)
	h.run(context.Background(), callerLive("caller", workspace), ToolEventRead, `{"session_id":"read","seq":1,"before":null}`)
	reads := f.callsOf("ReadEvent")
	a, b := reads[0].arg.(readEventArgs), reads[1].arg.(readEventArgs)
	if a.before != nil || a.after == nil || *a.after != 1 || b.before != nil || b.after != nil {
		t.Fatalf("window sides passed: %+v %+v", a, b)
	}
}

func TestEventReadOfALargeEventIsNeverAbridged(t *testing.T) {
	big := strings.Repeat("0123456789", 20000)
	l := liveWith(hdr("big", 2, workspace, ""), ev(0, session.TypeUserMessage, userMsg(big)))
	svc := realService(t, live(hdr("caller", 1, workspace, "")), l)
	h := newHarness(t, svc, DefaultConfig())
	o := outcomeOf(t, h.run(context.Background(), callerLive("caller", workspace), ToolEventRead, `{"session_id":"big","seq":0}`))
	mustContain(t, "output", o.Text, `"text": "`+big+`"`)
}

func TestUnencodableEventIsASanitizedFailure(t *testing.T) {
	f := newFake(t)
	f.readEvent = func(context.Context, string, int, *int, *int) (sq.EventWindow, error) {
		e := session.Event{Type: "x", Seq: 0, Data: json.RawMessage(`{"secret":`)}
		return sq.EventWindow{Session: hdr("caller", 1, workspace, ""), Target: e, Events: []session.Event{e}}, nil
	}
	f.readTitleSnapshots = (&corpus{records: []sq.SessionRecord{{Header: hdr("caller", 1, workspace, "")}}}).readTitles
	h := newHarness(t, f, DefaultConfig())
	res := h.run(context.Background(), callerLive("caller", workspace), ToolEventRead, `{"seq":0}`)
	expectError(t, res, CodeToolFailed, msgToolFailed)
	mustContain(t, "log", h.log.text(), "tool-session-query: event read failed: ")
}

func TestABrokenLoggerFailsTheCallGenerically(t *testing.T) {
	f := newFake(t)
	f.traceSession = func(context.Context, string) (sq.LineageTrace, error) {
		return sq.LineageTrace{}, sq.Errorf(sq.CodePersistenceFailed, "storage secret")
	}
	h := newHarness(t, f, DefaultConfig())
	h.log.panicWith = "logger exploded"
	res := h.run(context.Background(), callerLive("caller", workspace), ToolSessionTrace, `{}`)
	expectError(t, res, CodeToolFailed, msgToolFailed)
	if h.log.count() != 1 {
		t.Fatalf("logger called %d times, want 1", h.log.count())
	}
}

func TestISOTimeMatchesJavaScript(t *testing.T) {
	for ms, want := range map[int64]string{
		0:                 "1970-01-01T00:00:00.000Z",
		30:                "1970-01-01T00:00:00.030Z",
		-1:                "1969-12-31T23:59:59.999Z",
		1785987646184:     "2026-08-06T03:40:46.184Z",
		-62167219200000:   "0000-01-01T00:00:00.000Z",
		-62198755200000:   "-000001-01-01T00:00:00.000Z",
		253402300800000:   "+010000-01-01T00:00:00.000Z",
		8640000000000000:  "+275760-09-13T00:00:00.000Z",
		-8640000000000000: "-271821-04-20T00:00:00.000Z",
	} {
		if got := isoTime(ms); got != want {
			t.Errorf("isoTime(%d) = %s, want %s", ms, got, want)
		}
	}
}

// TestEventReadKeepsLineSeparatorsAsStored pins design §8.29 for U+2028 and
// U+2029: the target block is the stored event re-indented, so separators
// stored as raw characters (a log written by upstream's JSON.stringify, or
// by hand) come out raw, and separators stored as \u2028 escapes (Go's
// encoder writes those) come out as the same escapes, in a live session
// and in one read back from its JSONL log.
func TestEventReadKeepsLineSeparatorsAsStored(t *testing.T) {
	const stored = `{"role":"user","id":"u","content":[{"type":"text","text":"raw ` + "\u2028|\u2029" + ` escaped \u2028|\u2029"}],"source":{"kind":"user"}}`
	const want = `"text": "raw ` + "\u2028|\u2029" + ` escaped \u2028|\u2029"`
	target := session.Event{Type: session.TypeUserMessage, Seq: 0, Time: 1000, SurfaceOp: session.OpAppend, Data: json.RawMessage(stored)}

	inMemory := realService(t, live(hdr("caller", 1, workspace, "")), liveWith(hdr("seps", 2, workspace, ""), target))
	out := outcomeOf(t, newHarness(t, inMemory, DefaultConfig()).run(context.Background(), callerLive("caller", workspace), ToolEventRead, `{"session_id":"seps","seq":0}`)).Text
	mustContain(t, "live read", out, want)

	st := store.New(filepath.Join(t.TempDir(), "sessions"), store.Options{Log: slog.New(slog.DiscardHandler)})
	w, err := st.Create(hdr("seps", 2, workspace, ""), []session.Event{target})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	persisted := realService(t, live(hdr("caller", 1, workspace, "")))
	t.Cleanup(persisted.Mount(sq.NewStorePersistence(st)))
	out = outcomeOf(t, newHarness(t, persisted, DefaultConfig()).run(context.Background(), callerLive("caller", workspace), ToolEventRead, `{"session_id":"seps","seq":0}`)).Text
	mustContain(t, "persisted read", out, want)
}
