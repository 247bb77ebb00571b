package session

import (
	"fmt"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/hook"
)

// RegistryKey is the host service holding this process's live sessions.
var RegistryKey = host.NewKey[*Registry]("sessions")

// RegistryChange reports a live session attaching or detaching.
type RegistryChange struct {
	Live     *Live
	Attached bool
}

// Registry is the set of live sessions of this process, in attach order.
type Registry struct {
	mu    sync.RWMutex
	byID  map[string]*Live
	order []*Live
	obs   hook.Observers[RegistryChange]
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byID: map[string]*Live{}} }

// Attach adds l; an id that is already live is an error.
func (r *Registry) Attach(l *Live) error {
	r.mu.Lock()
	if _, dup := r.byID[l.ID()]; dup {
		r.mu.Unlock()
		return fmt.Errorf("session %s is already live in this process", l.ID())
	}
	r.byID[l.ID()] = l
	r.order = append(r.order, l)
	r.mu.Unlock()
	r.obs.Emit(RegistryChange{Live: l, Attached: true}, nil)
	return nil
}

// Detach removes the live session l if it is the one registered under its id.
func (r *Registry) Detach(l *Live) {
	r.mu.Lock()
	if r.byID[l.ID()] != l {
		r.mu.Unlock()
		return
	}
	delete(r.byID, l.ID())
	for i, x := range r.order {
		if x == l {
			r.order = append(r.order[:i:i], r.order[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	r.obs.Emit(RegistryChange{Live: l, Attached: false}, nil)
}

// Get returns the live session with the given id.
func (r *Registry) Get(id string) (*Live, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	l, ok := r.byID[id]
	return l, ok
}

// List returns the live sessions in attach order.
func (r *Registry) List() []*Live {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]*Live(nil), r.order...)
}

// Subscribe registers fn for attach and detach changes.
func (r *Registry) Subscribe(fn func(RegistryChange)) (unsubscribe func()) {
	return r.obs.Subscribe(fn)
}
