package procgroup

import (
	"errors"
	"sync"
)

// Tracker keeps the groups whose leader has exited while background members
// still run, so that they die when the tracker's owner closes it (or, if the
// process dies first, with the process). The zero value is ready to use.
type Tracker struct {
	mu     sync.Mutex
	groups []*Group
	closed bool
}

// Keep takes g after its leader has been waited for: a finished group is
// released now, one with members left is kept until it finishes or Close
// kills it. Keep also releases kept groups that have finished since. After
// Close, Keep kills g.
func (t *Tracker) Keep(g *Group) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		_ = g.Kill()
		return
	}
	var live []*Group
	for _, old := range append(t.groups, g) {
		if !old.Release() {
			live = append(live, old)
		}
	}
	t.groups = live
}

// Len is the number of groups kept.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.groups)
}

// Close kills every kept group.
func (t *Tracker) Close() error {
	t.mu.Lock()
	groups := t.groups
	t.groups, t.closed = nil, true
	t.mu.Unlock()
	var errs []error
	for _, g := range groups {
		errs = append(errs, g.Kill())
	}
	return errors.Join(errs...)
}
