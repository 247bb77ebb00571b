package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
)

// ledger counts the client's requests that have no answer on the wire yet.
// The SDK writes an answer after the handler returns, from a goroutine of
// its own, so only the output tells when the last one is out; Serve waits
// for that before it returns, and the process before it exits.
type ledger struct {
	mu      sync.Mutex
	pending int
	idle    chan struct{} // closed while pending == 0
}

func newLedger() *ledger {
	l := &ledger{idle: make(chan struct{})}
	close(l.idle)
	return l
}

// opened records a request handed to the SDK.
func (l *ledger) opened() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == 0 {
		l.idle = make(chan struct{})
	}
	l.pending++
}

// answered records an answer written to the client.
func (l *ledger) answered() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == 0 {
		return
	}
	l.pending--
	if l.pending == 0 {
		close(l.idle)
	}
}

// wait returns once every recorded request was answered, or ctx is done.
func (l *ledger) wait(ctx context.Context) {
	l.mu.Lock()
	ch := l.idle
	l.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// responsePrefix starts every frame the SDK writes that carries an id.
var responsePrefix = []byte(`{"jsonrpc":"2.0","id":`)

// isAnswer reports whether an outgoing frame answers a request: it has an
// id and, unlike the agent's own requests, no method after it.
func isAnswer(frame []byte) bool {
	if !bytes.HasPrefix(frame, responsePrefix) {
		return false
	}
	rest := frame[len(responsePrefix):]
	dec := json.NewDecoder(bytes.NewReader(rest))
	var id json.RawMessage
	if err := dec.Decode(&id); err != nil {
		return false
	}
	rest = bytes.TrimLeft(rest[dec.InputOffset():], " ")
	return !bytes.HasPrefix(rest, []byte(`,"method"`))
}
