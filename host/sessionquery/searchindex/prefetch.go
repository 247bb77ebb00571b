package searchindex

import (
	"context"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// prefetchWorkers read and extract logs ahead of the single SQLite writer
// while a whole corpus is indexed: reading JSONL and extracting text costs
// about as much CPU as indexing it, so overlapping the two nearly halves a
// build on two cores. The lookahead must cover several write batches
// (batchDocs), or the readers sit idle while the writer commits and the
// writer then waits for them: a batch of the tiny preset's one-turn logs
// (~25 documents each) is ~160 logs; with batches of ~320 logs and this
// lookahead the writer of a tiny rebuild waited ~3.7 s for the readers,
// and a lookahead of 160 left it ~7% slower still. It is
// bounded twice: by logs, and by the listed size of the logs read ahead
// and not yet consumed (always at least one), because a read-ahead log is
// held decoded, several times its size: 640 logs of 15,000 events would
// hold gigabytes.
const (
	prefetchWorkers = 2
	prefetchAhead   = 640
	prefetchBytes   = 24 << 20
)

// inspection is one log read ahead of its turn. A build lists one per log
// before reading any (50,000 on the tiny preset), so it is kept small: its
// snapshot is the listing's, its result allocated once read.
type inspection struct {
	snap  *sessionquery.PersistedSnapshot
	base  string
	done  bool // guarded by the prefetcher's mu
	c     *persistedChange
	retry bool
	err   error
}

// prefetcher inspects jobs in order with a bounded lookahead. Every
// started inspection is waited for by stop, so cancelling never leaves a
// backend call running.
type prefetcher struct {
	jobs   []*inspection
	next   int // next job a worker takes
	mu     sync.Mutex
	cond   *sync.Cond
	taken  int   // jobs the consumer has taken
	ahead  int64 // listed bytes of the jobs in [taken, next)
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newPrefetcher(ctx context.Context, ix *Index, b sessionquery.Binding, jobs []*inspection) *prefetcher {
	p := newWindow(ctx, jobs)
	for range min(prefetchWorkers, len(jobs)) {
		p.wg.Go(func() {
			for {
				job := p.claim()
				if job == nil {
					return
				}
				c, retry, err := ix.inspect(p.ctx, b, *job.snap, job.base)
				p.finish(job, &c, retry, err)
			}
		})
	}
	return p
}

// newWindow returns a prefetcher of jobs without workers.
func newWindow(ctx context.Context, jobs []*inspection) *prefetcher {
	p := &prefetcher{jobs: jobs}
	p.cond = sync.NewCond(&p.mu)
	p.ctx, p.cancel = context.WithCancel(ctx)
	// Whoever waits (take, claim) also wakes when ctx ends (stop ends it,
	// which also releases this).
	context.AfterFunc(p.ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	return p
}

// finish records a job's result and wakes the consumer.
func (p *prefetcher) finish(job *inspection, c *persistedChange, retry bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	job.c, job.retry, job.err, job.done = c, retry, err, true
	p.cond.Broadcast()
}

// claim hands the next job to a worker once it is within the lookahead
// window, or nil when there is nothing left or the prefetcher stopped.
func (p *prefetcher) claim() *inspection {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.next < len(p.jobs) && p.full() && p.ctx.Err() == nil {
		p.cond.Wait()
	}
	if p.next >= len(p.jobs) || p.ctx.Err() != nil {
		return nil
	}
	job := p.jobs[p.next]
	p.next++
	p.ahead += job.snap.Size
	return job
}

// full reports whether the lookahead window has no room for the next job.
// The job the consumer waits for (next <= taken) always has room.
func (p *prefetcher) full() bool {
	if p.next <= p.taken {
		return false
	}
	return p.next >= p.taken+prefetchAhead || p.ahead+p.jobs[p.next].snap.Size > prefetchBytes
}

// take waits for job i, which the consumer must take in order, and lets
// go of it so its documents can be freed once consumed. If the context
// ends before a worker claimed the job, nobody ever will: the job fails
// with ABORTED instead of being waited for.
func (p *prefetcher) take(i int) *inspection {
	p.mu.Lock()
	defer p.mu.Unlock()
	job := p.jobs[i]
	for j := p.taken; j <= i && j < p.next; j++ {
		p.ahead -= p.jobs[j].snap.Size
	}
	p.taken = max(p.taken, i+1)
	p.cond.Broadcast()
	// A started inspection is always awaited.
	for !job.done {
		if p.ctx.Err() != nil && p.next <= i {
			job.err = aborted(p.ctx)
			return job
		}
		p.cond.Wait()
	}
	p.jobs[i] = nil
	return job
}

// stop ends the workers and waits for every inspection they started.
func (p *prefetcher) stop() {
	p.cancel()
	p.wg.Wait()
}
