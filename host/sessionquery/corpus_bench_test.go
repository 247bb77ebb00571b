package sessionquery_test

import (
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// BenchmarkBuildDocumentsCorpus builds the documents of 100 generated
// sessions (about 20,000 events of the benchmark corpus's realistic mix)
// per iteration: the extractor's share of an index build. The bytes are
// the events' payloads.
func BenchmarkBuildDocumentsCorpus(b *testing.B) {
	st, entries, err := benchcorpus.Sample(b.Context(), b.TempDir(), 100)
	if err != nil {
		b.Fatal(err)
	}
	logs := make(map[string][]session.Event, len(entries))
	var size int64
	for _, e := range entries {
		_, events, err := st.Inspect(b.Context(), e.Header.ID)
		if err != nil {
			b.Fatal(err)
		}
		logs[e.Header.ID] = events
		for _, ev := range events {
			size += int64(len(ev.Data))
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for id, events := range logs {
			if _, err := sessionquery.BuildDocuments(id, events); err != nil {
				b.Fatal(err)
			}
		}
	}
}
