package tui

import (
	"context"
	"sync"
)

// poster carries work from other goroutines to the UI goroutine. post never
// blocks: it queues a closure and wakes the pump, whose goroutine is the
// only one calling into the application's blocking QueueUpdateDraw. Every
// closure queued while the UI was busy runs in one batch followed by one
// draw, so a burst of stream deltas costs a single redraw, and a session
// observer never waits for the screen.
type poster struct {
	mu     sync.Mutex
	queue  []func()
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

func newPoster() *poster {
	return &poster{wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// post queues f to run on the UI goroutine. After the pump stopped, f is
// dropped: the UI it would change is gone.
func (p *poster) post(f func()) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.queue = append(p.queue, f)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run is the pump: it hands each batch to update (QueueUpdateDraw) until ctx
// is done, then drops whatever is left. update is called from this
// goroutine only.
func (p *poster) run(ctx context.Context, update func(func())) {
	defer close(p.done)
	defer func() {
		p.mu.Lock()
		p.closed, p.queue = true, nil
		p.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		p.mu.Lock()
		batch := p.queue
		p.queue = nil
		p.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		update(func() {
			for _, f := range batch {
				f()
			}
		})
	}
}
