package tools

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// A tool body returns only its canonical value; whatever else it wants on its
// result (a context for the next step, presentation meta, file mutations, the
// end of the turn) it records through the context the pipeline hands it.
// The recorder lives on the dispatch context, so it survives execute wrappers
// that replace the cancellation context.

type recorderKey struct{}

type recorder struct {
	mu        sync.Mutex
	contexts  []session.Message
	meta      json.RawMessage
	mutations json.RawMessage
	concludes bool
}

func recorderFrom(ctx context.Context) *recorder {
	rec, _ := ctx.Value(recorderKey{}).(*recorder)
	return rec
}

// DeferContext attaches msg to the running call's result; the agent loop
// delivers it as a user message at the next step, after the step's results.
// It reports false when ctx is not a tool body's context.
func DeferContext(ctx context.Context, msg session.Message) bool {
	rec := recorderFrom(ctx)
	if rec == nil {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.contexts = append(rec.contexts, msg)
	return true
}

// SetMeta sets the result's presentation meta (persisted on tool/result,
// never shown to the model). It reports false outside a tool body.
func SetMeta(ctx context.Context, meta json.RawMessage) bool {
	rec := recorderFrom(ctx)
	if rec == nil {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.meta = meta
	return true
}

// SetMutations records the workspace file mutations the call committed. They
// stay on the result even when a policy later replaces or blocks it, because
// the files changed regardless. It reports false outside a tool body.
func SetMutations(ctx context.Context, mutations json.RawMessage) bool {
	rec := recorderFrom(ctx)
	if rec == nil {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.mutations = mutations
	return true
}

// ConcludeTurn marks a successful result as the end of the agent's turn. It
// reports false outside a tool body.
func ConcludeTurn(ctx context.Context) bool {
	rec := recorderFrom(ctx)
	if rec == nil {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.concludes = true
	return true
}

// apply copies what the body recorded onto r.
func (rec *recorder) apply(r Result) Result {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.contexts) > 0 {
		r.AdditionalContexts = append(append([]session.Message(nil), rec.contexts...), r.AdditionalContexts...)
	}
	if rec.meta != nil {
		r.Meta = rec.meta
	}
	if rec.mutations != nil {
		r.Mutations = rec.mutations
	}
	r.ConcludesTurn = rec.concludes && !r.IsError
	return r
}
