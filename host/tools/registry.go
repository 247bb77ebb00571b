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
	// Cleared observes every call that passed the gate (allowed or
	// approved, no guard objected) as Prepare returns it ready to
	// dispatch: from the preparing goroutine, in model order.
	Cleared hook.Observers[*Call]
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

// Register adds d. Duplicate names and invalid definitions are errors; a
// session tool (Definition.Session) may not share a name with a tool every
// session sees, nor with another tool of its session.
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
	if len(d.RawParameters) > 0 && (d.Parameters != nil || d.ValidateArgs == nil) {
		return nil, fmt.Errorf("tool %q: a raw parameter schema needs ValidateArgs and no Parameters", d.Name)
	}
	if err := d.Parameters.check(); err != nil {
		return nil, fmt.Errorf("tool %q: parameter schema: %w", d.Name, err)
	}
	output, err := parseOutputSchema(d.Output.Schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: output schema: %w", d.Name, err)
	}
	e := &entry{def: d, output: output}
	key := defKey(d.Session, d.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.defs[key]; dup {
		return nil, fmt.Errorf("tool %q is already registered", d.Name)
	}
	if _, dup := r.defs[defKey("", d.Name)]; dup && d.Session != "" {
		return nil, fmt.Errorf("tool %q is already registered for every session", d.Name)
	}
	r.defs[key] = e
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.defs[key] == e {
				delete(r.defs, key)
			}
		})
	}, nil
}

// defKey keys a definition by its session ("" for every session) and name;
// NUL can be in neither.
func defKey(session, name string) string { return session + "\x00" + name }

// Get returns the definition called name that every session sees. A caller
// holding a call uses For, which also finds the session's own tools.
func (r *Registry) Get(name string) (*Definition, bool) {
	return r.Lookup("", name)
}

// Lookup returns the definition called name as session sees it: its own
// tools, then those every session sees.
func (r *Registry) Lookup(session, name string) (*Definition, bool) {
	e, ok := r.lookup(session, name)
	if !ok {
		return nil, false
	}
	return e.def, true
}

// For returns the definition call addresses, as call's session sees it.
func (r *Registry) For(call *Call) (*Definition, bool) {
	return r.Lookup(callSession(call), call.Name)
}

func callSession(call *Call) string {
	if call == nil || call.Session == nil {
		return ""
	}
	return call.Session.ID()
}

func (r *Registry) lookup(session, name string) (*entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if session != "" {
		if e, ok := r.defs[defKey(session, name)]; ok {
			return e, true
		}
	}
	e, ok := r.defs[defKey("", name)]
	return e, ok
}

// Definitions returns every definition every session sees, ordered by name.
func (r *Registry) Definitions() []*Definition { return r.DefinitionsFor("") }

// DefinitionsFor returns the definitions session sees, ordered by name.
func (r *Registry) DefinitionsFor(session string) []*Definition {
	r.mu.RLock()
	out := make([]*Definition, 0, len(r.defs))
	for _, e := range r.defs {
		if e.def.Session == "" || (session != "" && e.def.Session == session) {
			out = append(out, e.def)
		}
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Schemas returns what a request carries for every tool every session sees,
// ordered by name.
func (r *Registry) Schemas() []Schema { return r.SchemasFor("") }

// SchemasFor returns what a request of session carries, ordered by name.
func (r *Registry) SchemasFor(session string) []Schema {
	defs := r.DefinitionsFor(session)
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
