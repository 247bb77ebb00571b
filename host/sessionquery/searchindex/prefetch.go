package searchindex

import (
	"context"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// prefetchWorkers read and extract logs ahead of the single SQLite writer
// while a whole corpus is indexed: reading JSONL and extracting text costs
// about as much CPU as indexing it, so overlapping the two nearly halves a
// build on two cores. The lookahead must cover more than one write batch
// (batchDocs), or the readers sit idle while the writer commits. It is
// bounded twice: by logs, and by the listed size of the logs read ahead
// and not yet consumed (always at least one), because a read-ahead log is
// held decoded, several times its size: 160 logs of 15,000 events would
// hold gigabytes.
const (
	prefetchWorkers = 2
	prefetchAhead   = 160
	prefetchBytes   = 24 << 20
)

// inspection is one log read ahead of its turn.
type inspection struct {
	snap  sessionquery.PersistedSnapshot
	base  string
	done  chan struct{}
	c     persistedChange
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
	p := &prefetcher{jobs: jobs}
	p.cond = sync.NewCond(&p.mu)
	p.ctx, p.cancel = context.WithCancel(ctx)
	for range min(prefetchWorkers, len(jobs)) {
		p.wg.Go(func() {
			for {
				job := p.claim()
				if job == nil {
					return
				}
				job.c, job.retry, job.err = ix.inspect(p.ctx, b, job.snap, job.base)
				close(job.done)
			}
		})
	}
	return p
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
	job := p.jobs[i]
	for j := p.taken; j <= i && j < p.next; j++ {
		p.ahead -= p.jobs[j].snap.Size
	}
	p.taken = max(p.taken, i+1)
	p.cond.Broadcast()
	p.mu.Unlock()
	select {
	case <-job.done:
	case <-p.ctx.Done():
		p.mu.Lock()
		claimed := p.next > i
		p.mu.Unlock()
		if !claimed {
			job.err = aborted(p.ctx)
			return job
		}
		<-job.done // a started inspection is always awaited
	}
	p.mu.Lock()
	p.jobs[i] = nil
	p.mu.Unlock()
	return job
}

// stop ends the workers and waits for every inspection they started.
func (p *prefetcher) stop() {
	p.cancel()
	p.mu.Lock()
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}
