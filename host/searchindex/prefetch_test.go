package searchindex

import (
	"context"
	"fmt"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

func TestPrefetcherReadsInOrderAndStopsCleanlyOnCancel(t *testing.T) {
	f, fake := newFakeFixture(t)
	n := prefetchAhead + 40
	var jobs []*inspection
	for i := range n {
		id := fmt.Sprintf("s%03d", i)
		fake.put(hdr(id, int64(i)), "r1", texts("needle "+id))
		jobs = append(jobs, &inspection{snap: sessionquery.PersistedSnapshot{Header: hdr(id, int64(i)), Revision: "r1"}, done: make(chan struct{})})
	}
	b := f.svc.Binding()
	pf := newPrefetcher(context.Background(), f.ix, b, jobs[:10])
	for i := range 10 {
		job := pf.take(i)
		if job.err != nil || job.c.header.ID != fmt.Sprintf("s%03d", i) || len(job.c.docs) != 1 {
			t.Fatalf("job %d = %+v, %v", i, job.c.header, job.err)
		}
	}
	pf.stop()

	// Cancel while the workers are stuck in their first inspections: the
	// consumer gets ABORTED for those once they return, later jobs are
	// never started, and stop returns.
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan string, n)
	fake.inspectHook = func(c context.Context, id string) {
		started <- id
		<-c.Done()
	}
	pf = newPrefetcher(ctx, f.ix, b, jobs[10:])
	<-started
	cancel()
	if job := pf.take(0); job.err == nil {
		t.Error("the first job succeeded after cancellation")
	}
	if job := pf.take(len(jobs) - 11); job.err == nil {
		t.Error("an unclaimed job succeeded after cancellation")
	}
	pf.stop()
	if got := len(fake.inspected()); got > 10+prefetchWorkers {
		t.Errorf("%d inspections started, want at most the %d running when cancelled", got-10, prefetchWorkers)
	}
}
