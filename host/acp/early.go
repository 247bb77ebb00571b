package acp

import (
	"runtime"
	"sync"
)

// Early is handed to the Backend build (Options.Backend): through it the
// build puts the parts it has ready to work before the rest of the
// Backend is built. The zero Early puts nothing to work.
type Early struct{ c *earlyCatalog }

// ServeCatalog answers session/list from c from now on, without waiting
// for the rest of the build; the Backend the build returns must have c
// as its Catalog. It returns withdraw, which stops that use and waits for
// the session/list answers that use c: the build calls it before it
// closes c, when it fails. Once withdrawn (or after a failed build),
// session/list waits for the build and answers its outcome, as every
// other session request does. Calling withdraw again, or after a build
// that succeeded, does nothing.
func (e Early) ServeCatalog(c Catalog) (withdraw func()) {
	if e.c == nil || c == nil {
		return func() {}
	}
	return e.c.serve(c)
}

// earlyCatalog is the Catalog session/list uses while the Backend is
// being built.
type earlyCatalog struct {
	// served is closed once the build served a Catalog.
	served chan struct{}
	once   sync.Once

	mu sync.Mutex
	// c is the Catalog, nil before it is served and once withdrawn.
	c         Catalog
	withdrawn bool
	// users counts the session/list answers using c; idle, made by a
	// withdraw that waits for them, is closed by the last one.
	users int
	idle  chan struct{}
}

func newEarlyCatalog() *earlyCatalog { return &earlyCatalog{served: make(chan struct{})} }

func (e *earlyCatalog) serve(c Catalog) func() {
	e.mu.Lock()
	if !e.withdrawn {
		e.c = c
	}
	e.mu.Unlock()
	e.once.Do(func() { close(e.served) })
	// The session/list answers woken here wait on this goroutine's
	// processor, which the build would keep for the plugins: let them run
	// first (editors ask for the history right after initialize).
	runtime.Gosched()
	return e.withdraw
}

// withdraw stops new uses of the Catalog and waits for the running ones.
func (e *earlyCatalog) withdraw() {
	e.mu.Lock()
	e.c, e.withdrawn = nil, true
	if e.users == 0 {
		e.mu.Unlock()
		return
	}
	if e.idle == nil {
		e.idle = make(chan struct{})
	}
	idle := e.idle
	e.mu.Unlock()
	<-idle
}

// acquire returns the early Catalog and what releases it, or nil when
// there is none (never served, or withdrawn).
func (e *earlyCatalog) acquire() (Catalog, func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.c == nil {
		return nil, nil
	}
	e.users++
	return e.c, e.release
}

func (e *earlyCatalog) release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.users--; e.users == 0 && e.idle != nil {
		close(e.idle)
		e.idle = nil
	}
}

// enterCatalog is enter for session/list: it returns the Catalog to list
// from, the Backend's once built, else the early one as soon as the build
// serves it.
func (s *server) enterCatalog() (Catalog, func(), error) {
	select {
	case <-s.ready:
	case <-s.early.served:
		select {
		case <-s.ready:
			// Built meanwhile: the Backend answers, as for every request.
		default:
			if c, release := s.early.acquire(); c != nil {
				done, err := s.register()
				if err != nil {
					release()
					return nil, nil, err
				}
				return c, func() { done(); release() }, nil
			}
		}
	}
	done, err := s.enter()
	if err != nil {
		return nil, nil, err
	}
	return s.b.Catalog, done, nil
}
