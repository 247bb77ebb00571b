package hook

import (
	"context"
	"sync"
)

// Next continues a chain with the given context and input.
type Next[In, Out any] func(ctx context.Context, in In) Out

// Middleware is one link of a Chain.
type Middleware[In, Out any] func(ctx context.Context, in In, next Next[In, Out]) Out

type link[In, Out any] struct {
	id int
	mw Middleware[In, Out]
}

// Chain is an ordered list of middlewares around a terminal function.
// The zero value is an empty chain ready to use.
type Chain[In, Out any] struct {
	mu      sync.Mutex
	nextID  int
	prepend []link[In, Out] // most recently prepended first
	normal  []link[In, Out]
}

// Use appends mw after every ordinary middleware and returns its remover.
func (c *Chain[In, Out]) Use(mw Middleware[In, Out]) (remove func()) {
	return c.add(mw, false)
}

// Prepend puts mw before every ordinary middleware (and before earlier
// prepends) and returns its remover.
func (c *Chain[In, Out]) Prepend(mw Middleware[In, Out]) (remove func()) {
	return c.add(mw, true)
}

func (c *Chain[In, Out]) add(mw Middleware[In, Out], first bool) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	l := link[In, Out]{id: c.nextID, mw: mw}
	if first {
		c.prepend = append([]link[In, Out]{l}, c.prepend...)
	} else {
		c.normal = append(c.normal, l)
	}
	var once sync.Once
	return func() { once.Do(func() { c.remove(l.id) }) }
}

func (c *Chain[In, Out]) remove(id int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prepend = without(c.prepend, id)
	c.normal = without(c.normal, id)
}

func without[In, Out any](links []link[In, Out], id int) []link[In, Out] {
	out := make([]link[In, Out], 0, len(links))
	for _, l := range links {
		if l.id != id {
			out = append(out, l)
		}
	}
	return out
}

// Len reports how many middlewares are registered.
func (c *Chain[In, Out]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.prepend) + len(c.normal)
}

// Run calls the chain with terminal as the innermost step.
func (c *Chain[In, Out]) Run(ctx context.Context, in In, terminal Next[In, Out]) Out {
	c.mu.Lock()
	links := make([]link[In, Out], 0, len(c.prepend)+len(c.normal))
	links = append(links, c.prepend...)
	links = append(links, c.normal...)
	c.mu.Unlock()
	var call func(i int) Next[In, Out]
	call = func(i int) Next[In, Out] {
		if i == len(links) {
			return terminal
		}
		return func(ctx context.Context, in In) Out {
			return links[i].mw(ctx, in, call(i+1))
		}
	}
	return call(0)(ctx, in)
}
