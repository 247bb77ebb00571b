package searchindex

import (
	"context"
	"sync"
)

// fifo is a mutual-exclusion lock granted in arrival order. A waiter whose
// context ends leaves the queue without disturbing the order of the others;
// the operation holding the lock is never interrupted by it.
type fifo struct {
	mu      sync.Mutex
	held    bool
	waiters []chan struct{}
	// queued, when set (tests only), is told the queue length whenever an
	// operation starts waiting.
	queued func(n int)
}

// acquire waits for the lock. It returns ctx's error if ctx ends first, in
// which case the caller does not hold the lock.
func (f *fifo) acquire(ctx context.Context) error {
	f.mu.Lock()
	if !f.held && len(f.waiters) == 0 {
		f.held = true
		f.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	f.waiters = append(f.waiters, ch)
	if f.queued != nil {
		f.queued(len(f.waiters))
	}
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		for i, w := range f.waiters {
			if w == ch {
				f.waiters = append(f.waiters[:i:i], f.waiters[i+1:]...)
				f.mu.Unlock()
				return ctx.Err()
			}
		}
		f.mu.Unlock()
		// The lock was handed over while ctx ended: pass it on.
		<-ch
		f.release()
		return ctx.Err()
	}
}

// release hands the lock to the oldest waiter, if any.
func (f *fifo) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		f.held = false
		return
	}
	next := f.waiters[0]
	f.waiters = f.waiters[1:]
	close(next)
}
