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
		jobs = append(jobs, &inspection{snap: &sessionquery.PersistedSnapshot{Header: hdr(id, int64(i)), Revision: "r1"}})
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
	fake.InspectHook = func(c context.Context, id string) {
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
	if got := len(fake.Inspected()); got > 10+prefetchWorkers {
		t.Errorf("%d inspections started, want at most the %d running when cancelled", got-10, prefetchWorkers)
	}
}

func TestPrefetchWindowIsBoundedByTheListedBytes(t *testing.T) {
	sizes := []int64{prefetchBytes / 2, prefetchBytes / 2, prefetchBytes / 2, 2 * prefetchBytes, 1}
	var jobs []*inspection
	for _, n := range sizes {
		jobs = append(jobs, &inspection{snap: &sessionquery.PersistedSnapshot{Size: n}})
	}
	p := newWindow(context.Background(), jobs)
	defer p.stop()
	claim := func(want int) {
		t.Helper()
		if p.full() {
			t.Fatalf("no room for job %d (next %d, taken %d, %d bytes ahead)", want, p.next, p.taken, p.ahead)
		}
		if job := p.claim(); job != jobs[want] {
			t.Fatalf("claimed another job than %d", want)
		}
	}
	consume := func(i int) {
		t.Helper()
		p.finish(jobs[i], &persistedChange{}, false, nil)
		p.take(i)
	}
	claim(0)
	claim(1)
	if !p.full() {
		t.Fatal("a third half-budget log was read ahead")
	}
	consume(0)
	claim(2)
	consume(1)
	consume(2)
	// A log over the whole budget is still read when it is the one the
	// consumer waits for, and then alone.
	claim(3)
	if !p.full() {
		t.Fatal("a log was read ahead beside one over the budget")
	}
	consume(3)
	claim(4)
	if p.ahead != 1 {
		t.Errorf("%d bytes ahead, want 1", p.ahead)
	}
}
