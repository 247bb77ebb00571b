package tools

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/seed-e9b4dba4/dsh/host/hook"
)

// Registry holds tool definitions and the pipeline's extension points.
// Register and the chains are safe for concurrent use.
type Registry struct {
	// PreExecute decides allow / deny / ask for each call; its terminal
	// allows. Permissions and hook bridges register here.
	PreExecute hook.Chain[*Call, PreDecision]
	// Execute wraps dispatch. A wrapper may call next with a different
	// context (a deadline) and may replace the result; nothing else.
	Execute hook.Chain[*Call, Result]
	// PostExecute sees every result and may accept, replace content or
	// block; its terminal accepts unchanged.
	PostExecute hook.Chain[PostInput, PostDecision]
	// Results observes every completed call.
	Results hook.Observers[Completed]

	log *slog.Logger

	mu       sync.RWMutex
	defs     map[string]*entry
	guards   []guardEntry
	guardID  int
	approver Approver
	tokens   atomic.Uint64
}

// entry is a registered definition with its compiled output schema.
type entry struct {
	def    *Definition
	output *TypeSchema
}

type guardEntry struct {
	id int
	fn func(ctx context.Context, call *Call) string
}

// NewRegistry returns an empty registry that logs through log.
func NewRegistry(log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{log: log, defs: map[string]*entry{}}
}

// Register adds d. Duplicate names and invalid definitions are errors.
func (r *Registry) Register(d *Definition) (remove func(), err error) {
	if d == nil || d.Name == "" {
		return nil, fmt.Errorf("tool definition needs a name")
	}
	if d.Execute == nil {
		return nil, fmt.Errorf("tool %q has no Execute", d.Name)
	}
	if d.Output.Render == nil {
		return nil, fmt.Errorf("tool %q has no output renderer", d.Name)
	}
	if d.Timeout < 0 {
		return nil, fmt.Errorf("tool %q: timeout must be positive", d.Name)
	}
	if err := d.Parameters.check(); err != nil {
		return nil, fmt.Errorf("tool %q: parameter schema: %w", d.Name, err)
	}
	output, err := parseOutputSchema(d.Output.Schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: output schema: %w", d.Name, err)
	}
	e := &entry{def: d, output: output}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.defs[d.Name]; dup {
		return nil, fmt.Errorf("tool %q is already registered", d.Name)
	}
	r.defs[d.Name] = e
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.defs[d.Name] == e {
				delete(r.defs, d.Name)
			}
		})
	}, nil
}

// Get returns the definition called name.
func (r *Registry) Get(name string) (*Definition, bool) {
	e, ok := r.lookup(name)
	if !ok {
		return nil, false
	}
	return e.def, true
}

func (r *Registry) lookup(name string) (*entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.defs[name]
	return e, ok
}

// Definitions returns every definition ordered by name.
func (r *Registry) Definitions() []*Definition {
	r.mu.RLock()
	out := make([]*Definition, 0, len(r.defs))
	for _, e := range r.defs {
		out = append(out, e.def)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Schemas returns what a request carries for every tool, ordered by name.
func (r *Registry) Schemas() []Schema {
	defs := r.Definitions()
	out := make([]Schema, len(defs))
	for i, d := range defs {
		out[i] = SchemaOf(d)
	}
	return out
}

// Guard adds a monotonic guard: any non-empty string it returns denies the
// call with that reason, and nothing can override it.
func (r *Registry) Guard(fn func(ctx context.Context, call *Call) string) (remove func()) {
	r.mu.Lock()
	r.guardID++
	id := r.guardID
	r.guards = append(r.guards, guardEntry{id, fn})
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			out := r.guards[:0:0]
			for _, g := range r.guards {
				if g.id != id {
					out = append(out, g)
				}
			}
			r.guards = out
		})
	}
}

// Approver returns the installed answerer for "ask" decisions, or nil. A
// pre-execute policy that asks on its own behalf (the permissions service,
// which remembers "allow always" answers) uses it.
func (r *Registry) Approver() Approver {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.approver
}

// SetApprover installs the answerer for "ask" decisions and returns a
// function restoring the previous one. Without an approver, ask denies.
func (r *Registry) SetApprover(a Approver) (restore func()) {
	r.mu.Lock()
	prev := r.approver
	r.approver = a
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.approver = prev
		r.mu.Unlock()
	}
}
