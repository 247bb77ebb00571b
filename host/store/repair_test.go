package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// openTurnLog is a turn cut short by a crash: two calls were made, one was
// answered, and the next write was torn.
func openTurnLog(id string) (clean, torn string) {
	clean = rawHeader(id) + lines(
		ev(0, session.TypeTurnStart, `{"turn":1}`),
		ev(1, session.TypeStepStart, `{"turn":1,"step":1}`),
		ev(2, session.TypeUserMessage, `{"content":[{"type":"text","text":"go"}],"source":{"kind":"user"},"role":"user","id":"m0"}`),
		toolCall(3, 1, 1, "call_a"),
		toolCall(4, 1, 1, "call_b"),
		toolResult(5, 1, 1, "call_a", "done"),
	)
	return clean, `{"type":"tool/result","seq":6,"time":17000`
}

func TestInspectIgnoresTornTailWithoutTouchingTheLog(t *testing.T) {
	fx := newFixture(t, Options{})
	clean, torn := openTurnLog("s-torn")
	path := writeLog(t, fx.s, "s-torn", clean+torn)
	_, events, err := fx.s.Inspect(t.Context(), "s-torn")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 6 || events[5].Type != session.TypeToolResult {
		t.Fatalf("Inspect returned %d events", len(events))
	}
	if string(readFile(t, path)) != clean+torn {
		t.Error("Inspect changed the log")
	}
}

func TestLoadTruncatesTornTailAndClosesOpenTurn(t *testing.T) {
	fx := newFixture(t, Options{})
	clean, torn := openTurnLog("s-repair")
	path := writeLog(t, fx.s, "s-repair", clean+torn)
	head, err := fx.s.ChangesHead()
	if err != nil {
		t.Fatal(err)
	}

	_, events, err := fx.s.Load(t.Context(), "s-repair")
	if err != nil {
		t.Fatal(err)
	}
	repaired := readFile(t, path)
	goldie.New(t).Assert(t, "repaired", repaired)
	if !bytes.HasPrefix(repaired, []byte(clean)) {
		t.Fatal("repair rewrote complete lines")
	}
	_, inspected, err := fx.s.Inspect(t.Context(), "s-repair")
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, events, inspected)

	var types []string
	for _, e := range events[6:] {
		types = append(types, e.Type)
		if e.Time != events[5].Time {
			t.Errorf("%s time = %d, want the last event's time %d", e.Type, e.Time, events[5].Time)
		}
	}
	if got := strings.Join(types, ","); got != "tool/result,step/end,turn/end" {
		t.Fatalf("closers = %s", got)
	}
	var res session.ToolResult
	if err := events[6].DecodeData(&res); err != nil {
		t.Fatal(err)
	}
	if src, _ := events[6].Sources(); len(src) != 1 || src[0] != 4 {
		t.Errorf("sourceEventSeqs = %v, want [4] (the unanswered call)", src)
	}
	if string(events[6].SurfaceOp) != `"append"` || res.Error == nil || res.Error.Code != "TOOL_OUTCOME_UNKNOWN" ||
		res.Error.Name != "ToolInterruptedError" || res.Message.SourceKind() != session.SourceTool ||
		!res.Message.Content[0].IsError || res.Message.Content[0].ToolCallID != "call_b" {
		t.Errorf("synthetic result = %s", events[6].Data)
	}

	// The repair is announced before it changes the log, then journaled
	// once durable.
	changes, _, err := fx.s.Changes(head)
	if err != nil || len(changes) != 2 || changes[1].Size != int64(len(repaired)) {
		t.Errorf("journal after repair = %+v, %v", changes, err)
	}
	if !strings.Contains(fx.logs.String(), "incomplete last line") {
		t.Error("truncating a torn tail was not logged")
	}

	before, _ := fx.s.Stat(t.Context(), "s-repair")
	next, _ := fx.s.ChangesHead()
	_, again, err := fx.s.Load(t.Context(), "s-repair")
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, again, events)
	after, _ := fx.s.Stat(t.Context(), "s-repair")
	if !bytes.Equal(readFile(t, path), repaired) || after.Revision != before.Revision {
		t.Error("a second Load modified the log")
	}
	if changes, _, _ := fx.s.Changes(next); len(changes) != 0 {
		t.Errorf("a second Load journaled %+v", changes)
	}
}

func TestOpenRepairsThenContinuesAfterTheClosers(t *testing.T) {
	fx := newFixture(t, Options{})
	clean, torn := openTurnLog("s-resume")
	writeLog(t, fx.s, "s-resume", clean+torn)
	w, h, events, err := fx.s.Open(t.Context(), "s-resume")
	if err != nil {
		t.Fatal(err)
	}
	if h.ID != "s-resume" || len(events) != 9 {
		t.Fatalf("Open = %s, %d events", h.ID, len(events))
	}
	if err := w.Append(ev(8, session.TypeTurnStart, `{"turn":2}`)); err == nil {
		t.Fatal("Append accepted a seq that the closers already used")
	}
	mustAppend(t, w, ev(9, session.TypeTurnStart, `{"turn":2}`))
	mustClose(t, w)
	_, events, err = fx.s.Inspect(t.Context(), "s-resume")
	if err != nil || len(events) != 10 {
		t.Fatalf("Inspect = %d events, %v", len(events), err)
	}
}

func TestCloseOpenTurn(t *testing.T) {
	turnStart := func(seq, turn int) session.Event {
		return ev(seq, session.TypeTurnStart, fmt.Sprintf(`{"turn":%d}`, turn))
	}
	stepStart := func(seq, turn, step int) session.Event {
		return ev(seq, session.TypeStepStart, fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step))
	}
	stepEnd := func(seq, turn, step int) session.Event {
		return ev(seq, session.TypeStepEnd, fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step))
	}
	turnEnd := func(seq, turn int) session.Event {
		return ev(seq, session.TypeTurnEnd, fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))
	}
	tests := []struct {
		name   string
		events []session.Event
		want   string // type:data summaries of the closers
	}{
		{"empty log", nil, ""},
		{"no turn", []session.Event{ev(0, "session/title", `{}`)}, ""},
		{"closed turn", []session.Event{turnStart(0, 1), turnEnd(1, 1)}, ""},
		{"earlier open turn, last closed", []session.Event{turnStart(0, 1), turnStart(1, 2), turnEnd(2, 2)}, ""},
		{
			"open turn without step",
			[]session.Event{turnStart(0, 3)},
			`turn/end {"turn":3,"reason":{"kind":"interrupted"}}`,
		},
		{
			"open step",
			[]session.Event{turnStart(0, 1), stepStart(1, 1, 2)},
			`step/end {"turn":1,"step":2} | turn/end {"turn":1,"reason":{"kind":"interrupted"}}`,
		},
		{
			"step closed, turn open",
			[]session.Event{turnStart(0, 1), stepStart(1, 1, 1), stepEnd(2, 1, 1)},
			`turn/end {"turn":1,"reason":{"kind":"interrupted"}}`,
		},
		{
			"calls of earlier steps and of earlier turns",
			[]session.Event{
				turnStart(0, 1), stepStart(1, 1, 1), toolCall(2, 1, 1, "old"), stepEnd(3, 1, 1), turnEnd(4, 1),
				turnStart(5, 2), stepStart(6, 2, 1), toolCall(7, 2, 1, "x"), toolCall(8, 2, 1, "y"),
				toolResult(9, 2, 1, "y", "ok"), stepEnd(10, 2, 1), stepStart(11, 2, 2), toolCall(12, 2, 2, "z"),
			},
			`tool/result call=x step=1 src=[7] | tool/result call=z step=2 src=[12] | step/end {"turn":2,"step":2} | turn/end {"turn":2,"reason":{"kind":"interrupted"}}`,
		},
		{
			"unreadable turn number falls back to the ordinal",
			[]session.Event{turnStart(0, 1), turnEnd(1, 1), ev(2, session.TypeTurnStart, `"bad"`)},
			`turn/end {"turn":2,"reason":{"kind":"interrupted"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			closers := closeOpenTurn("s", tt.events)
			var got []string
			for i, e := range closers {
				if e.Seq != len(tt.events)+i {
					t.Errorf("closer %d has seq %d", i, e.Seq)
				}
				if e.Type == session.TypeToolResult {
					var r session.ToolResult
					if err := json.Unmarshal(e.Data, &r); err != nil {
						t.Fatal(err)
					}
					got = append(got, fmt.Sprintf("tool/result call=%s step=%d src=%s", r.Message.Content[0].ToolCallID, r.Step, e.SourceEventSeqs))
					continue
				}
				got = append(got, e.Type+" "+string(e.Data))
			}
			if strings.Join(got, " | ") != tt.want {
				t.Errorf("closers:\n got %s\nwant %s", strings.Join(got, " | "), tt.want)
			}
		})
	}
}

func TestRecoveredMessageIDIsStableUUID(t *testing.T) {
	a, b := recoveredMessageID("s1", "c1"), recoveredMessageID("s1", "c1")
	if a != b || len(a) != 36 || recoveredMessageID("s2", "c1") == a {
		t.Errorf("ids %s %s", a, b)
	}
}

func TestLoadLeavesCleanLogUntouched(t *testing.T) {
	fx := newFixture(t, Options{})
	content := rawHeader("s-clean") + lines(
		ev(0, session.TypeTurnStart, `{"turn":1}`),
		ev(1, session.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`))
	path := writeLog(t, fx.s, "s-clean", content)
	head, _ := fx.s.ChangesHead()
	if _, events, err := fx.s.Load(t.Context(), "s-clean"); err != nil || len(events) != 2 {
		t.Fatalf("Load = %d events, %v", len(events), err)
	}
	if string(readFile(t, path)) != content {
		t.Error("Load modified a clean log")
	}
	if changes, _, _ := fx.s.Changes(head); len(changes) != 0 {
		t.Errorf("Load of a clean log journaled %+v", changes)
	}
}

func TestTornTailAfterClosedTurnIsOnlyTruncated(t *testing.T) {
	fx := newFixture(t, Options{})
	content := rawHeader("s-cut") + lines(
		ev(0, session.TypeTurnStart, `{"turn":1}`),
		ev(1, session.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`))
	path := writeLog(t, fx.s, "s-cut", content+`{"type":"turn/st`)
	if _, events, err := fx.s.Load(t.Context(), "s-cut"); err != nil || len(events) != 2 {
		t.Fatalf("Load = %d events, %v", len(events), err)
	}
	if string(readFile(t, path)) != content {
		t.Errorf("log after repair:\n%s", readFile(t, path))
	}
}

func TestRepairRecoversOnlyACutOffTurnStream(t *testing.T) {
	chunk := func(seq, step int, c string) session.Event {
		return ev(seq, session.TypeAssistantChunk, fmt.Sprintf(`{"turn":1,"step":%d,"chunk":%s}`, step, c))
	}
	const delta = `{"type":"text-delta","index":0,"delta":"partial"}`
	base := []session.Event{
		ev(0, session.TypeTurnStart, `{"turn":1}`),
		ev(1, session.TypeStepStart, `{"turn":1,"step":1}`),
		ev(2, session.TypeRequestContext, `{"provider":"deepseek","model":"m"}`),
	}
	for _, tc := range []struct {
		name string
		tail []session.Event
		want string
	}{
		{"cut mid-stream", []session.Event{chunk(3, 1, delta)}, "assistant/chunk,assistant/message,step/end,turn/end"},
		{"a finished attempt awaiting its retry", []session.Event{chunk(3, 1, delta),
			chunk(4, 1, `{"type":"finish","kind":"error","failure":{"code":"SERVER","message":"x"}}`)}, "step/end,turn/end"},
		{"a compaction summary", []session.Event{chunk(3, 0, delta)}, "step/end,turn/end"},
		{"only whitespace", []session.Event{chunk(3, 1, `{"type":"text-delta","index":0,"delta":"  "}`)}, "assistant/chunk,step/end,turn/end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := append(slices.Clone(base), tc.tail...)
			closers := closeOpenTurn("s", events)
			var types []string
			for _, e := range closers {
				types = append(types, e.Type)
			}
			if got := strings.Join(types, ","); got != tc.want {
				t.Fatalf("closers = %s, want %s", got, tc.want)
			}
			if len(closers) < 2 || closers[1].Type != session.TypeAssistantMessage {
				return
			}
			var m session.AssistantMessage
			if err := closers[1].DecodeData(&m); err != nil {
				t.Fatal(err)
			}
			src, _ := closers[1].Sources()
			if !m.Interrupted || m.Message.Content[0].Text != "partial" || m.Message.SourceKind() != session.SourceModel ||
				!slices.Equal(src, []int{3, 4}) {
				t.Errorf("recovered %s with sources %v", closers[1].Data, src)
			}
		})
	}
}
