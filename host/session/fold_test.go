package session

import (
	"errors"
	"slices"
	"testing"
)

func TestFoldAppendsSurfaceNodesInLogOrder(t *testing.T) {
	events := []Event{
		logEv(0, TypeTurnStart, TurnStart{Turn: 1}),
		userEv(1, "hello"),
		logEv(2, TypeAssistantChunk, nil),
		assistantEv(3, "hi", src(2)),
		logEv(4, TypeTurnEnd, TurnEnd{Turn: 1, Reason: TurnEndReason{Kind: EndCompleted}}),
	}
	f := mustFold(t, events)
	if got := f.Nodes(); !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("nodes = %v, want [1 3]", got)
	}
	want := []string{SurfaceLogOnly, SurfaceCurrent, SurfaceLogOnly, SurfaceCurrent, SurfaceLogOnly}
	if got := f.Surfaces(); !slices.Equal(got, want) {
		t.Fatalf("surfaces = %v, want %v", got, want)
	}
	if len(f.Replacements()) != 0 || f.Generation() != 0 {
		t.Fatalf("replacements = %v, want none", f.Replacements())
	}
	if f.Surface(5) != "" || f.Surface(-1) != "" {
		t.Fatal("Surface out of range must be empty")
	}
}

func TestFoldEmptyLogHasEmptySurface(t *testing.T) {
	f := mustFold(t, nil)
	if f.Len() != 0 || len(f.Nodes()) != 0 || len(f.Surfaces()) != 0 {
		t.Fatalf("empty fold = %d events, nodes %v", f.Len(), f.Nodes())
	}
}

// session-query.md §7.A item 9.
func TestFoldClassifiesReplacedUserShadowedAndReplacerCurrent(t *testing.T) {
	events := []Event{
		userEv(0, "Hello\n(AI)+"),
		logEv(1, TypeAssistantChunk, nil),
		assistantEv(2, "replacement", replace(0, 0), src(0)),
		logEv(3, TypeTurnEnd, TurnEnd{Turn: 1, Reason: TurnEndReason{Kind: EndInterrupted}}),
	}
	f := mustFold(t, events)
	want := []string{SurfaceShadowed, SurfaceLogOnly, SurfaceCurrent, SurfaceLogOnly}
	if got := f.Surfaces(); !slices.Equal(got, want) {
		t.Fatalf("surfaces = %v, want %v", got, want)
	}
	reps := f.Replacements()
	if len(reps) != 1 || reps[0].Seq != 2 || reps[0].Start != 0 || reps[0].End != 0 || !slices.Equal(reps[0].Shadowed, []int{0}) {
		t.Fatalf("replacements = %+v", reps)
	}
}

func TestFoldReplaceShadowsThePositionalRangeBetweenStartAndEnd(t *testing.T) {
	events := []Event{
		userEv(0, "a"),
		assistantEv(1, "b"),
		userEv(2, "c"),
		assistantEv(3, "d"),
		// Declares 1..3 but removes 2 as well: the range is positional.
		pluginUserEv(4, "summary", replace(1, 3), src(3, 2, 1)),
	}
	f := mustFold(t, events)
	if got := f.Nodes(); !slices.Equal(got, []int{0, 4}) {
		t.Fatalf("nodes = %v, want [0 4]", got)
	}
	if got := f.Replacements()[0].Shadowed; !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("shadowed = %v, want [1 2 3]", got)
	}
	want := []string{SurfaceCurrent, SurfaceShadowed, SurfaceShadowed, SurfaceShadowed, SurfaceCurrent}
	if got := f.Surfaces(); !slices.Equal(got, want) {
		t.Fatalf("surfaces = %v, want %v", got, want)
	}
}

func TestFoldNestedReplacementsFollowSurfacePositionNotSeqOrder(t *testing.T) {
	events := []Event{
		userEv(0, "a"),
		userEv(1, "b"),
		assistantEv(2, "summary", replace(0, 0), src(0)),
		// The surface is now [2, 1]: start 2 precedes end 1 positionally.
		assistantEv(3, "summary 2", replace(2, 1), src(2, 1)),
	}
	f := mustFold(t, events)
	if got := f.Nodes(); !slices.Equal(got, []int{3}) {
		t.Fatalf("nodes = %v, want [3]", got)
	}
	want := []Replacement{
		{Seq: 2, Start: 0, End: 0, Shadowed: []int{0}},
		{Seq: 3, Start: 2, End: 1, Shadowed: []int{2, 1}},
	}
	got := f.Replacements()
	if len(got) != 2 {
		t.Fatalf("replacements = %+v", got)
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].Start != want[i].Start || got[i].End != want[i].End || !slices.Equal(got[i].Shadowed, want[i].Shadowed) {
			t.Fatalf("replacement %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if f.Generation() != 2 {
		t.Fatalf("generation = %d, want 2", f.Generation())
	}
	// Accessors return copies.
	got[0].Shadowed[0] = 99
	nodes := f.Nodes()
	nodes[0] = 99
	if f.Replacements()[0].Shadowed[0] != 0 || f.Nodes()[0] != 3 {
		t.Fatal("accessors leaked fold state")
	}
}

func TestFoldAcceptsValidProvenanceVariants(t *testing.T) {
	cases := []struct {
		name   string
		events []Event
	}{
		{"absent sources on append", []Event{userEv(0, "a")}},
		{"empty sources on assistant", []Event{assistantEv(0, "", rawSrc(`[]`))}},
		{"unordered earlier sources", []Event{userEv(0, "a"), userEv(1, "b"), assistantEv(2, "c", src(1, 0))}},
		{"integral values written as fraction or exponent", []Event{userEv(0, "a"), userEv(1, "b"), assistantEv(2, "c", rawSrc(`[0.0, 1e0]`))}},
		{"negative zero", []Event{userEv(0, "a"), assistantEv(1, "c", rawSrc(`[-0]`))}},
		{"replace op with whitespace and integral floats", []Event{userEv(0, "a"), assistantEv(1, "b", op(` {"end": 0.0, "op": "replace", "start": 0} `), src(0))}},
		{"replace covering two nodes", []Event{userEv(0, "a"), userEv(1, "b"), userEv(2, "c", replace(0, 1), src(0, 1))}},
		{"sources on a replace citing more than the shadowed nodes", []Event{logEv(0, TypeAssistantChunk, nil), userEv(1, "a"), assistantEv(2, "b", replace(1, 1), src(0, 1))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Fold(tc.events); err != nil {
				t.Fatalf("Fold: %v", err)
			}
		})
	}
}

// Every rule of session-query.md §1.4 (and §7.A 14, §7.C 57–58) with its
// stable message.
func TestFoldRejectsEveryRuleViolationWithAStableMessage(t *testing.T) {
	u0 := userEv(0, "a")
	cases := []struct {
		name   string
		events []Event
		seq    int
		msg    string
	}{
		{"seq gap", []Event{u0, userEv(1, "b", at(2))}, 1,
			"session event seq 2 is not contiguous; expected 1"},
		{"seq does not start at zero", []Event{userEv(0, "a", at(1))}, 0,
			"session event seq 1 is not contiguous; expected 0"},
		{"surfaceOp on a non-surface event", []Event{logEv(0, TypeTurnStart, TurnStart{Turn: 1}, op(`"append"`))}, 0,
			`session event 0 ("turn/start") is not surface-eligible and cannot carry surfaceOp`},
		{"sourceEventSeqs on a non-surface event", []Event{u0, logEv(1, TypeTurnStart, TurnStart{Turn: 1}, src(0))}, 1,
			`session event 1 ("turn/start") is not surface-eligible and cannot carry sourceEventSeqs`},
		{"surface event without surfaceOp", []Event{userEv(0, "a", op(""))}, 0,
			`session event 0 ("user/message") is surface-eligible and requires a surfaceOp`},
		{"unknown string op", []Event{userEv(0, "a", op(`"prepend"`))}, 0,
			`session event 0 ("user/message") carries an invalid surfaceOp: surfaceOp "prepend" is not "append" or a replace object`},
		{"null op", []Event{userEv(0, "a", op(`null`))}, 0,
			`session event 0 ("user/message") carries an invalid surfaceOp: surfaceOp null is not "append" or a replace object`},
		{"array op", []Event{userEv(0, "a", op(`["append"]`))}, 0,
			`session event 0 ("user/message") carries an invalid surfaceOp: surfaceOp ["append"] is not "append" or a replace object`},
		{"replace op missing end", []Event{u0, userEv(1, "b", op(`{"op":"replace","start":0}`), src(0))}, 1,
			`session event 1 ("user/message") carries an invalid surfaceOp: replace surfaceOp must have exactly the keys "op", "start" and "end"`},
		{"replace op with an extra key", []Event{u0, userEv(1, "b", op(`{"op":"replace","start":0,"end":0,"why":"x"}`), src(0))}, 1,
			`session event 1 ("user/message") carries an invalid surfaceOp: replace surfaceOp must have exactly the keys "op", "start" and "end"`},
		{"object op that is not replace", []Event{u0, userEv(1, "b", op(`{"op":"insert","start":0,"end":0}`), src(0))}, 1,
			`session event 1 ("user/message") carries an invalid surfaceOp: surfaceOp op "insert" is not "replace"`},
		{"negative replace start", []Event{u0, userEv(1, "b", op(`{"op":"replace","start":-1,"end":0}`), src(0))}, 1,
			`session event 1 ("user/message") carries an invalid surfaceOp: replace surfaceOp start -1 is not a non-negative safe integer`},
		{"fractional replace end", []Event{u0, userEv(1, "b", op(`{"op":"replace","start":0,"end":0.5}`), src(0))}, 1,
			`session event 1 ("user/message") carries an invalid surfaceOp: replace surfaceOp end 0.5 is not a non-negative safe integer`},
		{"string replace start", []Event{u0, userEv(1, "b", op(`{"op":"replace","start":"0","end":0}`), src(0))}, 1,
			`session event 1 ("user/message") carries an invalid surfaceOp: replace surfaceOp start "0" is not a non-negative safe integer`},
		{"unsafe replace start", []Event{u0, userEv(1, "b", op(`{"op":"replace","start":9007199254740992,"end":0}`), src(0))}, 1,
			`session event 1 ("user/message") carries an invalid surfaceOp: replace surfaceOp start 9007199254740992 is not a non-negative safe integer`},
		{"sources that are not an array", []Event{userEv(0, "a", rawSrc(`"invalid"`))}, 0,
			`session event 0 ("user/message") has sourceEventSeqs that is not an array`},
		{"null sources", []Event{userEv(0, "a", rawSrc(`null`))}, 0,
			`session event 0 ("user/message") has sourceEventSeqs that is not an array`},
		{"empty sources on user/message", []Event{userEv(0, "a", rawSrc(`[]`))}, 0,
			`session event 0 ("user/message") has empty sourceEventSeqs; only assistant/message may cite no sources`},
		{"empty sources on tool/result", []Event{toolResultEv(0, "c1", "out", rawSrc(`[]`))}, 0,
			`session event 0 ("tool/result") has empty sourceEventSeqs; only assistant/message may cite no sources`},
		{"sparse sources", []Event{u0, userEv(1, "b", rawSrc(`[null]`))}, 1,
			`session event 1 ("user/message") has sourceEventSeqs that does not densely contain non-negative safe integers`},
		{"string source", []Event{u0, userEv(1, "b", rawSrc(`["0"]`))}, 1,
			`session event 1 ("user/message") has sourceEventSeqs that does not densely contain non-negative safe integers`},
		{"fractional source", []Event{u0, userEv(1, "b", rawSrc(`[0.5]`))}, 1,
			`session event 1 ("user/message") has sourceEventSeqs that does not densely contain non-negative safe integers`},
		{"negative source", []Event{u0, userEv(1, "b", rawSrc(`[-1]`))}, 1,
			`session event 1 ("user/message") has sourceEventSeqs that does not densely contain non-negative safe integers`},
		{"unsafe source", []Event{u0, userEv(1, "b", rawSrc(`[9007199254740992]`))}, 1,
			`session event 1 ("user/message") has sourceEventSeqs that does not densely contain non-negative safe integers`},
		{"duplicate sources", []Event{u0, userEv(1, "b"), assistantEv(2, "c", rawSrc(`[1,0,1]`))}, 2,
			`session event 2 ("assistant/message") has duplicate sourceEventSeqs entry 1`},
		{"self source", []Event{u0, userEv(1, "b", src(1))}, 1,
			`session event 1 ("user/message") cites source seq 1, which is not an earlier event`},
		{"future source", []Event{u0, userEv(1, "b", src(0, 5))}, 1,
			`session event 1 ("user/message") cites source seq 5, which is not an earlier event`},
		{"replace start not in surface", []Event{u0, userEv(1, "b", replace(42, 0), src(0))}, 1,
			`session event 1 ("user/message") replaces from start seq 42, which is not in the current surface`},
		{"replace end not in surface", []Event{u0, userEv(1, "b", replace(0, 7), src(0))}, 1,
			`session event 1 ("user/message") replaces through end seq 7, which is not in the current surface`},
		{"replace of a log-only event", []Event{logEv(0, TypeTurnStart, TurnStart{Turn: 1}), userEv(1, "b", replace(0, 0), src(0))}, 1,
			`session event 1 ("user/message") replaces from start seq 0, which is not in the current surface`},
		{"replace of an already shadowed node", []Event{u0, userEv(1, "b", replace(0, 0), src(0)), userEv(2, "c", replace(0, 0), src(0))}, 2,
			`session event 2 ("user/message") replaces from start seq 0, which is not in the current surface`},
		{"replace start after end", []Event{u0, userEv(1, "b"), userEv(2, "c", replace(1, 0), src(0, 1))}, 2,
			`session event 2 ("user/message") replaces from start seq 1 (surface position 1), which comes after end seq 0 (surface position 0)`},
		{"replace without sources", []Event{u0, userEv(1, "b"), userEv(2, "c", replace(0, 1))}, 2,
			`session event 2 ("user/message") replaces surface nodes without sourceEventSeqs; it must cite every shadowed node (0, 1)`},
		{"replace not citing a shadowed node", []Event{u0, userEv(1, "b"), userEv(2, "c", replace(0, 1), src(0))}, 2,
			`session event 2 ("user/message") does not cite every shadowed surface node in sourceEventSeqs; missing 1`},
		{"tool/result replace of two nodes", []Event{u0, userEv(1, "b"), toolResultEv(2, "c1", "x", replace(0, 1), src(0, 1))}, 2,
			`session event 2 ("tool/result") is a tool/result replacement that must rewrite exactly one current node`},
		{"tool/result replace of a user message", []Event{u0, toolResultEv(1, "c1", "x", replace(0, 0), src(0))}, 1,
			`session event 1 ("tool/result") is a tool/result replacement that must target a current tool/result`},
		{"tool/result replace changing the call", []Event{toolResultEv(0, "c1", "out"), toolResultEv(1, "c2", "out", replace(0, 0), src(0))}, 1,
			`session event 1 ("tool/result") is a tool/result replacement that may change only the tool-result content`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Fold(tc.events)
			if f != nil {
				t.Fatalf("Fold returned a fold with error %v", err)
			}
			var fe *FoldError
			if !errors.As(err, &fe) {
				t.Fatalf("error = %v (%T), want *FoldError", err, err)
			}
			if fe.Message != tc.msg || err.Error() != tc.msg {
				t.Fatalf("message =\n  %s\nwant\n  %s", fe.Message, tc.msg)
			}
			if fe.Seq != tc.seq {
				t.Fatalf("seq = %d, want %d", fe.Seq, tc.seq)
			}
		})
	}
}

func TestFoldToolResultRewriteMayChangeOnlyTheResultContent(t *testing.T) {
	original := toolResultEv(0, "c1", "a very long output")
	withMeta := func(e Event, meta string, opts ...evOpt) Event {
		var r ToolResult
		if err := e.DecodeData(&r); err != nil {
			t.Fatal(err)
		}
		r.Meta = []byte(meta)
		e.Data = MustMarshal(r)
		for _, o := range opts {
			o(&e)
		}
		return e
	}
	shrink := func(text string, mutate func(*ToolResult)) Event {
		d := toolResultData("c1", text)
		if mutate != nil {
			mutate(&d)
		}
		return build(1, TypeToolResult, d, []evOpt{replace(0, 0), src(0)})
	}
	cases := []struct {
		name   string
		events []Event
		ok     bool
	}{
		{"content shrunk", []Event{original, shrink("[output elided]", nil)}, true},
		{"content replaced by several blocks", []Event{original, shrink("", func(d *ToolResult) {
			d.Message.Content[0].Content = []ContentBlock{TextBlock("head"), TextBlock("tail")}
		})}, true},
		{"isError flipped", []Event{original, shrink("x", func(d *ToolResult) { d.Message.Content[0].IsError = true })}, false},
		{"message id changed", []Event{original, shrink("x", func(d *ToolResult) { d.Message.ID = "other" })}, false},
		{"error info added", []Event{original, shrink("x", func(d *ToolResult) { d.Error = &ToolErrorInfo{Name: "E", Code: "X"} })}, false},
		{"turn changed", []Event{original, shrink("x", func(d *ToolResult) { d.Turn = 2 })}, false},
		{"equal meta in another key order", []Event{
			withMeta(original, `{"tags":["a",{"n":1}],"k":true}`),
			withMeta(shrink("x", nil), `{"k":true,"tags":["a",{"n":1.0}]}`),
		}, true},
		{"drifted meta array element", []Event{
			withMeta(original, `{"tags":["a"]}`),
			withMeta(shrink("x", nil), `{"tags":["b"]}`),
		}, false},
		{"meta array versus string", []Event{
			withMeta(original, `{"tags":["a"]}`),
			withMeta(shrink("x", nil), `{"tags":"a"}`),
		}, false},
		{"meta with renamed key", []Event{
			withMeta(original, `{"left":1}`),
			withMeta(shrink("x", nil), `{"right":1}`),
		}, false},
		{"meta with an extra key", []Event{
			withMeta(original, `{"one":1}`),
			withMeta(shrink("x", nil), `{"one":1,"two":2}`),
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fold(tc.events)
			if tc.ok && err != nil {
				t.Fatalf("Fold: %v", err)
			}
			if !tc.ok {
				var fe *FoldError
				if !errors.As(err, &fe) || fe.Message != `session event 1 ("tool/result") is a tool/result replacement that may change only the tool-result content` {
					t.Fatalf("error = %v, want the may-change-only-content violation", err)
				}
			}
		})
	}
}

func TestFoldToolResultRewriteNeedsAToolResultBlockOnBothSides(t *testing.T) {
	original := toolResultEv(0, "c1", "out")
	broken := build(1, TypeToolResult, map[string]any{"turn": 1, "step": 1, "message": map[string]any{"content": []any{}}}, []evOpt{replace(0, 0), src(0)})
	_, err := Fold([]Event{original, broken})
	var fe *FoldError
	if !errors.As(err, &fe) || fe.Seq != 1 {
		t.Fatalf("error = %v, want a fold error at seq 1", err)
	}
}

func TestFoldAppendValidatesLikeFoldAndIsAtomic(t *testing.T) {
	events := []Event{
		userEv(0, "a"),
		assistantEv(1, "b"),
		pluginUserEv(2, "summary", replace(0, 1), src(0, 1)),
		userEv(3, "c"),
	}
	f := NewSurfaceFold()
	for _, e := range events[:2] {
		if err := f.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	bad := pluginUserEv(2, "summary", replace(0, 1), src(0)) // does not cite 1
	if err := f.Append(bad); err == nil {
		t.Fatal("Append accepted an invalid replacement")
	}
	if f.Len() != 2 || !slices.Equal(f.Nodes(), []int{0, 1}) || f.Generation() != 0 {
		t.Fatalf("failed Append changed the fold: len %d nodes %v", f.Len(), f.Nodes())
	}
	for _, e := range events[2:] {
		if err := f.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	whole := mustFold(t, events)
	if !slices.Equal(f.Nodes(), whole.Nodes()) || !slices.Equal(f.Surfaces(), whole.Surfaces()) {
		t.Fatalf("incremental fold %v/%v differs from whole fold %v/%v", f.Nodes(), f.Surfaces(), whole.Nodes(), whole.Surfaces())
	}
}

func TestFoldAppendAfterFoldNeverWritesIntoTheCallersSlice(t *testing.T) {
	backing := make([]Event, 2, 8)
	backing[0] = userEv(0, "a")
	backing[1] = assistantEv(1, "b")
	spare := backing[:3]
	spare[2] = logEv(2, TypeTurnEnd, nil)
	f := mustFold(t, backing)
	if err := f.Append(userEv(2, "c")); err != nil {
		t.Fatal(err)
	}
	if spare[2].Type != TypeTurnEnd {
		t.Fatalf("Append overwrote the caller's backing array: %s", spare[2].Type)
	}
	if e, ok := f.Event(2); !ok || e.Type != TypeUserMessage {
		t.Fatalf("Event(2) = %v %v", e.Type, ok)
	}
}

func TestEventOpDecodesAppendAndReplace(t *testing.T) {
	cases := []struct {
		raw  string
		want SurfaceOp
		ok   bool
	}{
		{`"append"`, SurfaceOp{}, true},
		{`"\u0061ppend"`, SurfaceOp{}, true},
		{`{"op":"replace","start":3,"end":9}`, SurfaceOp{Replace: true, Start: 3, End: 9}, true},
		{`{"end":9007199254740991,"start":0,"op":"replace"}`, SurfaceOp{Replace: true, Start: 0, End: MaxSafeInteger}, true},
		{``, SurfaceOp{}, false},
		{`"Append"`, SurfaceOp{}, false},
		{`true`, SurfaceOp{}, false},
		{`{"op":"replace","start":1,"end":2,"extra":null}`, SurfaceOp{}, false},
		{`{"op":"replace","start":1e400,"end":2}`, SurfaceOp{}, false},
		{`{"op":"replace","start":null,"end":2}`, SurfaceOp{}, false},
		{`{"op":null,"start":1,"end":2}`, SurfaceOp{}, false},
	}
	for _, tc := range cases {
		got, err := Event{SurfaceOp: []byte(tc.raw)}.Op()
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("Op(%s) = %+v, %v; want %+v ok=%v", tc.raw, got, err, tc.want, tc.ok)
		}
	}
	if r, err := (Event{SurfaceOp: OpReplace(4, 5)}).Op(); err != nil || r != (SurfaceOp{Replace: true, Start: 4, End: 5}) {
		t.Fatalf("OpReplace round trip = %+v, %v", r, err)
	}
}

func TestEventSourcesDecodesStrictly(t *testing.T) {
	cases := []struct {
		raw  string
		want []int
		ok   bool
	}{
		{``, nil, true},
		{`[]`, []int{}, true},
		{`[ 3, 1 ,2 ]`, []int{3, 1, 2}, true},
		{`[1.0, 2e0]`, []int{1, 2}, true},
		{`[9007199254740991]`, []int{MaxSafeInteger}, true},
		{`[9007199254740992]`, nil, false},
		{`[99999999999999999999]`, nil, false},
		{`[null]`, nil, false},
		{`[1,]`, nil, false},
		{`{}`, nil, false},
		{`"1"`, nil, false},
		{`[01]`, nil, false},
	}
	for _, tc := range cases {
		got, err := Event{SourceEventSeqs: []byte(tc.raw)}.Sources()
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) || (tc.want != nil && got == nil) {
			t.Errorf("Sources(%s) = %v, %v; want %v ok=%v", tc.raw, got, err, tc.want, tc.ok)
		}
	}
}
