package store

import (
	"fmt"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func benchChunk(seq int) session.Event {
	return ev(seq, session.TypeAssistantChunk,
		`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"delta":"a typical streamed token or two"}}`)
}

// BenchmarkAppend measures one event per Append, the agent loop's pattern
// while streaming.
func BenchmarkAppend(b *testing.B) {
	s := New(b.TempDir(), Options{})
	w, err := s.Create(testHeader("s-bench"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := w.Append(benchChunk(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendFlush measures the durability barrier after each event.
func BenchmarkAppendFlush(b *testing.B) {
	s := New(b.TempDir(), Options{})
	w, err := s.Create(testHeader("s-bench"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	for i := 0; b.Loop(); i++ {
		if err := w.Append(benchChunk(i)); err != nil {
			b.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInspect10k reads a 10,000-event session.
func BenchmarkInspect10k(b *testing.B) {
	s := New(b.TempDir(), Options{})
	w, err := s.Create(testHeader("s-bench"), nil)
	if err != nil {
		b.Fatal(err)
	}
	script := crashScript(1, 10_000)
	if err := w.Append(script...); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.Inspect(b.Context(), "s-bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList1000 lists 1,000 sessions spread over 10 workspaces.
func BenchmarkList1000(b *testing.B) {
	s := New(b.TempDir(), Options{})
	for i := range 1000 {
		h := testHeader(fmt.Sprintf("s-%04d", i))
		h.Cwd = session.Ptr(fmt.Sprintf("/work/proj%d", i%10))
		w, err := s.Create(h, []session.Event{benchChunk(0)})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		entries, err := s.List(b.Context())
		if err != nil || len(entries) != 1000 {
			b.Fatalf("List = %d, %v", len(entries), err)
		}
	}
}
