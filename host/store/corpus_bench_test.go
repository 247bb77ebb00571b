package store_test

import (
	"testing"

	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// BenchmarkInspectCorpus reads 100 generated sessions (about 20,000 events
// of the benchmark corpus's realistic mix) per iteration: the store's share
// of an index build.
func BenchmarkInspectCorpus(b *testing.B) {
	st, entries, err := benchcorpus.Sample(b.Context(), b.TempDir(), 100)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, e := range entries {
		size += e.Size
	}
	b.SetBytes(size)
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		for _, e := range entries {
			_, log, err := st.Inspect(b.Context(), e.Header.ID)
			if err != nil {
				b.Fatal(err)
			}
			events += len(log)
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
