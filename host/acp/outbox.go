package acp

import (
	"context"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// outbox delivers one session's updates in order from one goroutine it owns.
// Producers (the session's event observer, which runs on the agent's
// appending goroutine, and the load replay) never block on the client:
// Push only queues. Flush is the barrier a prompt answer and a permission
// request wait for.
type outbox struct {
	send func(sdk.SessionUpdate) error
	// onErr hears about the first update that could not be written; once
	// the client is gone every later one fails the same way.
	onErr  func(error)
	failed bool // touched only by run

	mu     sync.Mutex
	queue  []outItem
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

// outItem is an update to send or a barrier to release.
type outItem struct {
	update  *sdk.SessionUpdate
	barrier chan struct{}
}

func newOutbox(send func(sdk.SessionUpdate) error, onErr func(error)) *outbox {
	o := &outbox{send: send, onErr: onErr, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go o.run()
	return o
}

// Push queues updates; after Close they are dropped.
func (o *outbox) Push(updates ...sdk.SessionUpdate) {
	if len(updates) == 0 {
		return
	}
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	for i := range updates {
		o.queue = append(o.queue, outItem{update: &updates[i]})
	}
	o.mu.Unlock()
	o.signal()
}

// Flush waits until every update pushed before it was written (or failed),
// or ctx is done.
func (o *outbox) Flush(ctx context.Context) error {
	ch := make(chan struct{})
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		<-o.done
		return nil
	}
	o.queue = append(o.queue, outItem{barrier: ch})
	o.mu.Unlock()
	o.signal()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Close delivers what is queued, stops the goroutine and waits for it.
func (o *outbox) Close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.signal()
	<-o.done
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbox) run() {
	defer close(o.done)
	for {
		o.mu.Lock()
		batch, closed := o.queue, o.closed
		o.queue = nil
		o.mu.Unlock()
		for _, it := range batch {
			if it.barrier != nil {
				close(it.barrier)
				continue
			}
			if err := o.send(*it.update); err != nil && !o.failed {
				o.failed = true
				if o.onErr != nil {
					o.onErr(err)
				}
			}
		}
		if len(batch) > 0 {
			continue
		}
		if closed {
			return
		}
		<-o.wake
	}
}
