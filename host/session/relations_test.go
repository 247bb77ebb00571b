package session

import (
	"errors"
	"slices"
	"testing"
)

// tracingLog is the pinned scenario of session-query.md §1.5 (tracing.spec.ts).
func tracingLog() []Event {
	return []Event{
		logEv(0, TypeTurnStart, TurnStart{Turn: 1}),
		logEv(1, TypeStepStart, StepBoundary{Turn: 1, Step: 1}),
		logEv(2, TypeAssistantChunk, nil),
		userEv(3, "original", src(2)),
		assistantEv(4, "assistant", replace(3, 3), src(3, 2)),
		pluginUserEv(5, "plugin"),
		logEv(6, TypeStepEnd, StepBoundary{Turn: 1, Step: 1}),
		logEv(7, TypeStepStart, StepBoundary{Turn: 1, Step: 2}),
		assistantEv(8, "assistant 2", replace(4, 4), src(2, 4)),
	}
}

// session-query.md §1.5 table and §7.C item 53.
func TestRelationsMatchThePinnedTracingTable(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		seq      int
		surface  string
		by       *int
		chain    []int
		replaced []int
		sources  []int
		derived  []int
	}{
		{3, SurfaceShadowed, intp(4), []int{4, 8}, []int{}, []int{2}, []int{4}},
		{4, SurfaceShadowed, intp(8), []int{8}, []int{3}, []int{3, 2}, []int{8}},
		{2, SurfaceLogOnly, nil, []int{}, []int{}, []int{}, []int{3, 4, 8}},
		{8, SurfaceCurrent, nil, []int{}, []int{4}, []int{2, 4}, []int{}},
		{5, SurfaceCurrent, nil, []int{}, []int{}, []int{}, []int{}},
	}
	f := mustFold(t, tracingLog())
	for _, tc := range cases {
		for _, via := range []string{"fold", "TraceEvent"} {
			var r Relations
			if via == "fold" {
				var ok bool
				if r, ok = f.Relations(tc.seq); !ok {
					t.Fatalf("Relations(%d) not found", tc.seq)
				}
			} else {
				var err error
				if r, err = TraceEvent(tracingLog(), tc.seq); err != nil {
					t.Fatalf("TraceEvent(%d): %v", tc.seq, err)
				}
			}
			if r.Seq != tc.seq || r.Surface != tc.surface {
				t.Errorf("%s %d: seq/surface = %d/%s, want %s", via, tc.seq, r.Seq, r.Surface, tc.surface)
			}
			if (r.ReplacedBy == nil) != (tc.by == nil) || (tc.by != nil && *r.ReplacedBy != *tc.by) {
				t.Errorf("%s %d: replacedBy = %v, want %v", via, tc.seq, r.ReplacedBy, tc.by)
			}
			for _, pair := range []struct {
				name      string
				got, want []int
			}{
				{"chain", r.ReplacementChain, tc.chain},
				{"replaced", r.ReplacedEventSeqs, tc.replaced},
				{"sources", r.SourceEventSeqs, tc.sources},
				{"derived", r.DerivedEventSeqs, tc.derived},
			} {
				if pair.got == nil || !slices.Equal(pair.got, pair.want) {
					t.Errorf("%s %d: %s = %#v, want %v", via, tc.seq, pair.name, pair.got, pair.want)
				}
			}
		}
	}
}

func TestRelationsJSONOmitsReplacedByOnlyWhenNeverShadowed(t *testing.T) {
	f := mustFold(t, tracingLog())
	r2, _ := f.Relations(2)
	b, err := Marshal(r2)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":2,"surface":"log-only","replacementChain":[],"replacedEventSeqs":[],"sourceEventSeqs":[],"derivedEventSeqs":[3,4,8]}`
	if string(b) != want {
		t.Fatalf("json = %s\nwant   %s", b, want)
	}
	r3, _ := f.Relations(3)
	b, _ = Marshal(r3)
	want = `{"seq":3,"surface":"shadowed","replacedBy":4,"replacementChain":[4,8],"replacedEventSeqs":[],"sourceEventSeqs":[2],"derivedEventSeqs":[4]}`
	if string(b) != want {
		t.Fatalf("json = %s\nwant   %s", b, want)
	}
}

// session-query.md §7.C item 54.
func TestRelationsReturnFreshCopiesOnEveryCall(t *testing.T) {
	f := mustFold(t, tracingLog())
	a, _ := f.Relations(4)
	*a.ReplacedBy = 99
	a.ReplacementChain[0] = 99
	a.ReplacedEventSeqs[0] = 99
	a.SourceEventSeqs[0] = 99
	a.DerivedEventSeqs[0] = 99
	b, _ := f.Relations(4)
	if *b.ReplacedBy != 8 || b.ReplacementChain[0] != 8 || b.ReplacedEventSeqs[0] != 3 || b.SourceEventSeqs[0] != 3 || b.DerivedEventSeqs[0] != 8 {
		t.Fatalf("mutating one trace changed the next: %+v", b)
	}
	if reps := f.Replacements(); reps[0].Shadowed[0] != 3 {
		t.Fatalf("trace aliased fold replacements: %v", reps)
	}
}

// session-query.md §7.C item 56 and §8 item 24.
func TestTraceEventChecksTheTargetBeforeValidatingTheFold(t *testing.T) {
	broken := []Event{
		userEv(0, "a"),
		userEv(1, "b", replace(5, 5), src(0)), // malformed replace
	}
	if _, err := TraceEvent(broken, 9); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("trace 9 = %v, want ErrEventNotFound", err)
	}
	if _, err := TraceEvent(broken, -1); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("trace -1 = %v, want ErrEventNotFound", err)
	}
	_, err := TraceEvent(broken, 0)
	var fe *FoldError
	if !errors.As(err, &fe) || fe.Seq != 1 {
		t.Fatalf("trace 0 = %v, want a *FoldError at seq 1", err)
	}
}

func TestRelationsOutOfRangeIsNotFound(t *testing.T) {
	f := mustFold(t, tracingLog())
	for _, seq := range []int{-1, 9, 100} {
		if _, ok := f.Relations(seq); ok {
			t.Errorf("Relations(%d) found", seq)
		}
	}
}

func TestRelationsSeeEventsAppendedAfterTheFirstTrace(t *testing.T) {
	events := tracingLog()
	f := mustFold(t, events)
	if r, _ := f.Relations(5); len(r.DerivedEventSeqs) != 0 {
		t.Fatalf("derived before append = %v", r.DerivedEventSeqs)
	}
	if err := f.Append(assistantEv(9, "cites the plugin message", src(5, 2))); err != nil {
		t.Fatal(err)
	}
	if r, _ := f.Relations(5); !slices.Equal(r.DerivedEventSeqs, []int{9}) {
		t.Fatalf("derived of 5 after append = %v, want [9]", r.DerivedEventSeqs)
	}
	if r, _ := f.Relations(2); !slices.Equal(r.DerivedEventSeqs, []int{3, 4, 8, 9}) {
		t.Fatalf("derived of 2 after append = %v, want [3 4 8 9]", r.DerivedEventSeqs)
	}
}

func TestRelationsMayBeReadConcurrently(t *testing.T) {
	f := mustFold(t, tracingLog())
	done := make(chan []int)
	for range 4 {
		go func() {
			r, _ := f.Relations(2)
			done <- r.DerivedEventSeqs
		}()
	}
	for range 4 {
		if got := <-done; !slices.Equal(got, []int{3, 4, 8}) {
			t.Fatalf("derived = %v", got)
		}
	}
}
