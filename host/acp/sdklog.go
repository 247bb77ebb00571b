package acp

import (
	"context"
	"log/slog"
	"sync"
)

// gate is a slog.Handler for the SDK's connection diagnostics that can be
// shut: the SDK's reader goroutine logs its last line after the connection
// reports done, and nothing it does may reach the caller's log once Serve
// has returned.
type gate struct {
	mu     *sync.RWMutex
	closed *bool
	next   slog.Handler
}

func newGate(h slog.Handler) (*gate, func()) {
	g := &gate{mu: &sync.RWMutex{}, closed: new(bool), next: h}
	return g, func() {
		g.mu.Lock()
		*g.closed = true
		g.mu.Unlock()
	}
}

func (g *gate) Enabled(ctx context.Context, l slog.Level) bool { return g.next.Enabled(ctx, l) }

func (g *gate) Handle(ctx context.Context, r slog.Record) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if *g.closed {
		return nil
	}
	return g.next.Handle(ctx, r)
}

func (g *gate) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &gate{mu: g.mu, closed: g.closed, next: g.next.WithAttrs(attrs)}
}

func (g *gate) WithGroup(name string) slog.Handler {
	return &gate{mu: g.mu, closed: g.closed, next: g.next.WithGroup(name)}
}
