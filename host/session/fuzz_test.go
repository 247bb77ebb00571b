package session

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"unicode/utf8"
)

// FuzzFold feeds arbitrary JSONL logs to every reader of this package. None
// may panic, and their answers must agree with each other.
func FuzzFold(f *testing.F) {
	f.Add([]byte(`{"type":"user/message","seq":0,"time":0,"data":{},"surfaceOp":"append"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var events []Event
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			var e Event
			if json.Unmarshal(line, &e) == nil {
				events = append(events, e)
			}
		}
		checkReaders(t, events)
		// Renumbered, the same events get past the contiguity rule and
		// exercise the surface rules behind it.
		renumbered := CloneEvents(events)
		for i := range renumbered {
			renumbered[i].Seq = i
		}
		checkReaders(t, renumbered)
		title := FallbackTitle(string(data))
		if len(title) > FallbackTitleBytes || !utf8.ValidString(title) {
			t.Fatalf("FallbackTitle = %q", title)
		}
	})
}

func checkReaders(t *testing.T, events []Event) {
	t.Helper()
	_, _ = FoldTitle(events)
	_, _, _ = Fork(Header{ID: "src"}, events, ForkLatest, "child", 0)
	for i := range events {
		_, _ = events[i].Op()
		_, _ = events[i].Sources()
	}
	fold, foldErr := Fold(events)
	valid, validErr := ValidateEvents(events)
	if validErr == nil && foldErr != nil {
		t.Fatalf("ValidateEvents accepted a log Fold rejects: %v", foldErr)
	}
	if validErr == nil {
		if _, err := valid.Messages(); err != nil {
			t.Fatalf("a validated log has no derivable history: %v", err)
		}
	}
	if foldErr != nil {
		return
	}
	_, _ = fold.Messages()
	incremental := NewSurfaceFold()
	for _, e := range events {
		if err := incremental.Append(e); err != nil {
			t.Fatalf("Append rejected an event Fold accepted: %v", err)
		}
	}
	if !slices.Equal(incremental.Nodes(), fold.Nodes()) || !slices.Equal(incremental.Surfaces(), fold.Surfaces()) {
		t.Fatal("incremental and whole folds disagree")
	}
	surfaces := fold.Surfaces()
	for _, n := range fold.Nodes() {
		if surfaces[n] != SurfaceCurrent {
			t.Fatalf("node %d classified %s", n, surfaces[n])
		}
	}
	for seq, e := range events {
		isSurface := IsSurfaceType(e.Type)
		if isSurface == (surfaces[seq] == SurfaceLogOnly) {
			t.Fatalf("event %d (%s) classified %s", seq, e.Type, surfaces[seq])
		}
		r, ok := fold.Relations(seq)
		if !ok {
			t.Fatalf("Relations(%d) missing", seq)
		}
		prev := seq
		for _, c := range r.ReplacementChain {
			if c <= prev {
				t.Fatalf("chain of %d not increasing: %v", seq, r.ReplacementChain)
			}
			prev = c
		}
		for _, d := range r.DerivedEventSeqs {
			if d <= seq {
				t.Fatalf("derived of %d includes %d", seq, d)
			}
		}
	}
}
