package sessionquery

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func child(id, parent string, createdAt int64) session.Header {
	return session.Header{ID: id, CreatedAt: createdAt, ParentSession: &parent}
}

func nodeIDs(nodes []LineageNode) []string {
	out := []string{}
	for _, n := range nodes {
		out = append(out, n.Session.Header.ID)
	}
	return out
}

func TestTraceSessionWalksAncestorsAndOrdersDescendants(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake().
		add(header("root", 1)).
		add(child("parent", "root", 2)).
		add(child("target", "parent", 3)).
		add(child("b", "target", 4)).
		add(child("grandchild", "a", 6))
	fx.mount(t, p)
	fx.attach(t, child("a", "target", 4))
	fx.attach(t, child("older", "target", 3))
	trace, err := fx.svc.TraceSession(t.Context(), "target")
	if err != nil {
		t.Fatal(err)
	}
	if trace.Target.Header.ID != "target" || !trace.Target.Persisted || trace.Target.Live {
		t.Fatalf("target = %+v", trace.Target)
	}
	if got := ids(trace.Ancestors); !equalIDs(got, "parent", "root") {
		t.Fatalf("ancestors = %v", got)
	}
	if !trace.Complete || trace.Root == nil || trace.Root.Header.ID != "root" || trace.UnresolvedParentID != nil {
		t.Fatalf("complete=%v root=%v unresolved=%v", trace.Complete, trace.Root, trace.UnresolvedParentID)
	}
	if got := nodeIDs(trace.Descendants); !equalIDs(got, "older", "a", "b") {
		t.Fatalf("children = %v, want [older a b]", got)
	}
	a := trace.Descendants[1]
	if !a.Session.Live || a.Session.Persisted {
		t.Fatalf("a = %+v", a.Session)
	}
	if got := nodeIDs(a.Descendants); !equalIDs(got, "grandchild") {
		t.Fatalf("a's children = %v", got)
	}
	if len(trace.Descendants[0].Descendants) != 0 || trace.Descendants[0].Descendants == nil {
		t.Fatal("a leaf's descendants must be an empty list")
	}
	if n := len(p.CallsOf("list")); n != 1 {
		t.Fatalf("list calls = %d, want 1", n)
	}
	if n := len(p.CallsOf("inspect")); n != 0 {
		t.Fatalf("inspections = %d, want 0", n)
	}
}

func TestTraceSessionOfARootAndOfAnOrphan(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, header("root", 1))
	fx.attach(t, child("orphan", "outside", 2))
	trace, err := fx.svc.TraceSession(t.Context(), "root")
	if err != nil {
		t.Fatal(err)
	}
	if !trace.Complete || trace.Root == nil || trace.Root.Header.ID != "root" || len(trace.Ancestors) != 0 || trace.Ancestors == nil {
		t.Fatalf("root trace = %+v", trace)
	}
	b, _ := session.Marshal(trace)
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(b, &keys)
	if _, ok := keys["unresolvedParentId"]; ok {
		t.Fatalf("complete trace JSON has unresolvedParentId: %s", b)
	}
	trace, err = fx.svc.TraceSession(t.Context(), "orphan")
	if err != nil {
		t.Fatal(err)
	}
	if trace.Complete || trace.Root != nil || trace.UnresolvedParentID == nil || *trace.UnresolvedParentID != "outside" {
		t.Fatalf("orphan trace = %+v", trace)
	}
}

func TestTraceSessionRejectsCyclesAndMissingTargets(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, child("a", "b", 1))
	fx.attach(t, child("b", "a", 2))
	_, err := fx.svc.TraceSession(t.Context(), "a")
	wantError(t, err, CodeInvalidLineage, `session lineage contains a cycle at "a"`)
	fx.attach(t, child("self", "self", 3))
	_, err = fx.svc.TraceSession(t.Context(), "self")
	wantError(t, err, CodeInvalidLineage, `session lineage contains a cycle at "self"`)
	_, err = fx.svc.TraceSession(t.Context(), "missing")
	wantError(t, err, CodeSessionNotFound, `session "missing" not found`)
}

func TestTraceSessionListingFailureIsPersistenceFailed(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake()
	p.ListErr = errors.New("gone")
	fx.mount(t, p)
	_, err := fx.svc.TraceSession(t.Context(), "x")
	wantError(t, err, CodePersistenceFailed, "session persistence listing failed: gone")
}

func TestTraceSessionBuildsA3000DeepChainIteratively(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake().add(header("deep-0", 0))
	const depth = 3000
	for i := 1; i <= depth; i++ {
		p.add(child(fmt.Sprintf("deep-%d", i), fmt.Sprintf("deep-%d", i-1), int64(i)))
	}
	fx.mount(t, p)
	trace, err := fx.svc.TraceSession(t.Context(), "deep-0")
	if err != nil {
		t.Fatal(err)
	}
	nodes, level := trace.Descendants, 0
	for len(nodes) > 0 {
		level++
		if len(nodes) != 1 || nodes[0].Session.Header.ID != fmt.Sprintf("deep-%d", level) {
			t.Fatalf("level %d = %v", level, nodeIDs(nodes))
		}
		nodes = nodes[0].Descendants
	}
	if level != depth {
		t.Fatalf("depth = %d, want %d", level, depth)
	}
	leaf, err := fx.svc.TraceSession(t.Context(), fmt.Sprintf("deep-%d", depth))
	if err != nil {
		t.Fatal(err)
	}
	if len(leaf.Ancestors) != depth || leaf.Root.Header.ID != "deep-0" {
		t.Fatalf("leaf ancestors = %d, root %s", len(leaf.Ancestors), leaf.Root.Header.ID)
	}
}

func TestLineageTracesAreFreshCopies(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.attach(t, session.Header{ID: "root", CreatedAt: 1, Cwd: ptr("/w")})
	fx.attach(t, session.Header{ID: "kid", CreatedAt: 2, Cwd: ptr("/w"), ParentSession: ptr("root")})
	first, err := fx.svc.TraceSession(t.Context(), "root")
	if err != nil {
		t.Fatal(err)
	}
	*first.Target.Header.Cwd = "/a"
	*first.Root.Header.Cwd = "/b"
	*first.Descendants[0].Session.Header.Cwd = "/c"
	first.Descendants[0].Descendants = append(first.Descendants[0].Descendants, LineageNode{})
	second, err := fx.svc.TraceSession(t.Context(), "root")
	if err != nil {
		t.Fatal(err)
	}
	if *second.Target.Header.Cwd != "/w" || *second.Root.Header.Cwd != "/w" || *second.Descendants[0].Session.Header.Cwd != "/w" || len(second.Descendants[0].Descendants) != 0 {
		t.Fatal("mutating one trace changed the next")
	}
	if first.Target.Header.Cwd == first.Root.Header.Cwd {
		t.Fatal("target and root share a header pointer")
	}
}

// tracingLog is the pinned §1.5 scenario.
func tracingLog() []session.Event {
	return []session.Event{
		ev(0, session.TypeTurnStart, session.TurnStart{}),
		ev(1, session.TypeStepStart, session.StepBoundary{}),
		ev(2, session.TypeAssistantChunk, session.AssistantChunk{Chunk: json.RawMessage(`{}`)}),
		ev(3, session.TypeUserMessage, userText("original"), session.WithSources(2)),
		ev(4, session.TypeAssistantMessage, assistantText("rewritten"), session.WithSurface(session.OpReplace(3, 3)), session.WithSources(3, 2)),
		ev(5, session.TypeUserMessage, func() session.Message {
			m := userText("plugin")
			m.Source = session.PluginSource("memory", "")
			return m
		}()),
		ev(6, session.TypeStepEnd, session.StepBoundary{}),
		ev(7, session.TypeStepStart, session.StepBoundary{}),
		ev(8, session.TypeAssistantMessage, assistantText("again"), session.WithSurface(session.OpReplace(4, 4)), session.WithSources(2, 4)),
	}
}

func TestTraceEventMatchesThePinnedScenario(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	p := newFake().add(header("s", 1), tracingLog()...)
	fx.mount(t, p)
	cases := []struct {
		seq                               int
		surface                           string
		replacedBy                        *int
		chain, replaced, sources, derived []int
	}{
		{3, SurfaceShadowed, ptr(4), []int{4, 8}, []int{}, []int{2}, []int{4}},
		{4, SurfaceShadowed, ptr(8), []int{8}, []int{3}, []int{3, 2}, []int{8}},
		{2, SurfaceLogOnly, nil, []int{}, []int{}, []int{}, []int{3, 4, 8}},
		{8, SurfaceCurrent, nil, []int{}, []int{4}, []int{2, 4}, []int{}},
		{5, SurfaceCurrent, nil, []int{}, []int{}, []int{}, []int{}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.seq), func(t *testing.T) {
			tr, err := fx.svc.TraceEvent(t.Context(), "s", tc.seq)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Target.Seq != tc.seq || tr.Target.Surface != tc.surface || tr.Session.ID != "s" {
				t.Fatalf("target = %+v", tr.Target)
			}
			if (tr.ReplacedBy == nil) != (tc.replacedBy == nil) || (tr.ReplacedBy != nil && *tr.ReplacedBy != *tc.replacedBy) {
				t.Fatalf("replacedBy = %v, want %v", tr.ReplacedBy, tc.replacedBy)
			}
			for name, pair := range map[string][2][]int{
				"chain": {tr.ReplacementChain, tc.chain}, "replaced": {tr.ReplacedEventSeqs, tc.replaced},
				"sources": {tr.SourceEventSeqs, tc.sources}, "derived": {tr.DerivedEventSeqs, tc.derived},
			} {
				if pair[0] == nil || !slices.Equal(pair[0], pair[1]) {
					t.Fatalf("%s = %#v, want %v", name, pair[0], pair[1])
				}
			}
		})
	}
	if n, m := len(p.CallsOf("list")), len(p.CallsOf("inspect")); n != len(cases) || m != len(cases) {
		t.Fatalf("persisted traces made %d lists and %d inspections, want one each per trace", n, m)
	}
}

func TestEventTracesAreFreshCopies(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	fx.mount(t, newFake().add(session.Header{ID: "s", CreatedAt: 1, Cwd: ptr("/w")}, tracingLog()...))
	first, err := fx.svc.TraceEvent(t.Context(), "s", 3)
	if err != nil {
		t.Fatal(err)
	}
	first.ReplacementChain[0] = 99
	first.SourceEventSeqs[0] = 99
	first.DerivedEventSeqs[0] = 99
	*first.ReplacedBy = 99
	*first.Session.Cwd = "/x"
	second, err := fx.svc.TraceEvent(t.Context(), "s", 3)
	if err != nil {
		t.Fatal(err)
	}
	if second.ReplacementChain[0] != 4 || second.SourceEventSeqs[0] != 2 || second.DerivedEventSeqs[0] != 4 || *second.ReplacedBy != 4 || *second.Session.Cwd != "/w" {
		t.Fatalf("mutating a trace changed the next: %+v", second)
	}
}

func TestTraceEventSourcesAndFailures(t *testing.T) {
	t.Run("live id is served without persistence", func(t *testing.T) {
		fx := newFixture(t, DefaultConfig())
		p := newFake().add(header("s", 1), tracingLog()...)
		p.ListErr = errors.New("down")
		fx.mount(t, p)
		fx.attach(t, header("s", 1), "live")
		tr, err := fx.svc.TraceEvent(t.Context(), "s", 0)
		if err != nil || tr.Target.Type != session.TypeUserMessage {
			t.Fatalf("trace = %+v, %v", tr, err)
		}
		if len(p.Calls()) != 0 {
			t.Fatal("a live trace called persistence")
		}
	})
	failures := []struct {
		name  string
		setup func(p *fakePersistence)
		code  string
	}{
		{"list failure", func(p *fakePersistence) { p.ListErr = errors.New("x") }, CodePersistenceFailed},
		{"inspect failure", func(p *fakePersistence) { p.InspectErr["s"] = errors.New("x") }, CodePersistenceFailed},
		{"header mismatch", func(p *fakePersistence) { p.InspectHeader("s", header("s", 99)) }, CodeSourceConflict},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, DefaultConfig())
			p := newFake().add(header("s", 1), tracingLog()...)
			tc.setup(p)
			fx.mount(t, p)
			_, err := fx.svc.TraceEvent(t.Context(), "s", 0)
			wantCode(t, err, tc.code)
		})
	}
}

func TestTraceEventChecksTheTargetBeforeTheFold(t *testing.T) {
	fx := newFixture(t, DefaultConfig())
	broken := []session.Event{
		ev(0, session.TypeUserMessage, userText("x")),
		ev(1, session.TypeAssistantMessage, assistantText("y"), session.WithSurface(session.OpReplace(5, 6)), session.WithSources(0)),
	}
	fx.mount(t, newFake().add(header("s", 1), broken...))
	_, err := fx.svc.TraceEvent(t.Context(), "s", 9)
	wantError(t, err, CodeEventNotFound, `session "s" has no event at seq 9`)
	_, err = fx.svc.TraceEvent(t.Context(), "s", -1)
	wantError(t, err, CodeEventNotFound, `session "s" has no event at seq -1`)
	_, err = fx.svc.TraceEvent(t.Context(), "s", 0)
	wantCode(t, err, CodeInvalidSurface)
}

func TestMalformedProvenanceIsAnInvalidSurface(t *testing.T) {
	user := func(seq int, opts ...session.AppendOption) session.Event {
		return ev(seq, session.TypeUserMessage, userText("u"), opts...)
	}
	raw := func(s string) session.AppendOption {
		return func(e *session.Event) { e.SourceEventSeqs = json.RawMessage(s) }
	}
	cases := []struct {
		name string
		log  []session.Event
	}{
		{"sources on a non-surface event", []session.Event{ev(0, session.TypeTurnStart, session.TurnStart{}, raw(`[]`))}},
		{"sources that are not an array", []session.Event{ev(0, session.TypeTurnStart, session.TurnStart{}), user(1, raw(`{"0":0}`))}},
		{"empty sources on a user message", []session.Event{ev(0, session.TypeTurnStart, session.TurnStart{}), user(1, raw(`[]`))}},
		{"sparse sources", []session.Event{ev(0, session.TypeTurnStart, session.TurnStart{}), user(1, raw(`[0,null]`))}},
		{"duplicate sources", []session.Event{ev(0, session.TypeTurnStart, session.TurnStart{}), user(1, raw(`[0,0]`))}},
		{"negative source", []session.Event{ev(0, session.TypeTurnStart, session.TurnStart{}), user(1, raw(`[-1]`))}},
		{"future source", []session.Event{ev(0, session.TypeTurnStart, session.TurnStart{}), user(1, raw(`[1]`))}},
		{"replace without sources", []session.Event{user(0), user(1, session.WithSurface(session.OpReplace(0, 0)))}},
		{"replace not citing a shadowed node", []session.Event{user(0), user(1), user(2, session.WithSurface(session.OpReplace(0, 1)), session.WithSources(0))}},
		{"surfaceOp on a non-surface event", []session.Event{ev(0, session.TypeTurnStart, session.TurnStart{}, session.WithSurface(session.OpAppend))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, DefaultConfig())
			fx.mount(t, newFake().add(header("s", 1), tc.log...))
			_, err := fx.svc.TraceEvent(t.Context(), "s", 0)
			wantCode(t, err, CodeInvalidSurface)
			_, err = fx.svc.ListEvents(t.Context(), "s")
			wantCode(t, err, CodeInvalidSurface)
		})
	}
	// An empty source list is allowed on an assistant message.
	fx := newFixture(t, DefaultConfig())
	fx.mount(t, newFake().add(header("s", 1), ev(0, session.TypeAssistantMessage, assistantText(""), session.WithSources())))
	if _, err := fx.svc.ListEvents(t.Context(), "s"); err != nil {
		t.Fatalf("empty assistant sources rejected: %v", err)
	}
}
