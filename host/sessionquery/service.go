package sessionquery

import (
	"context"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, the bound of every
// count the service accepts so that its configuration means the same thing
// to every reader of it.
const maxSafeInteger = 1<<53 - 1

// Config is the base service configuration.
type Config struct {
	// ReadWindowMax bounds ReadEvent's before/after (default 50, >= 0).
	ReadWindowMax int
	// PersistedInspectConcurrency bounds title-batch inspections (default 4,
	// a positive safe integer).
	PersistedInspectConcurrency int
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{ReadWindowMax: 50, PersistedInspectConcurrency: 4}
}

// Validate reports the first invalid setting as INVALID_CONFIG.
func (c Config) Validate() error {
	if c.ReadWindowMax < 0 || c.ReadWindowMax > maxSafeInteger {
		return Errorf(CodeInvalidConfig, "session-query: readWindowMax must be a non-negative integer")
	}
	if c.PersistedInspectConcurrency < 1 || c.PersistedInspectConcurrency > maxSafeInteger {
		return Errorf(CodeInvalidConfig, "session-query: persistedInspectConcurrency must be a positive safe integer")
	}
	return nil
}

// Binding is the persistence backend mounted at one moment, with an identity
// that changes on every mount, unmount or replacement.
type Binding struct {
	ID          uint64
	Persistence Persistence // nil when nothing is mounted
}

// Service is the trusted session-query service over the live sessions of
// this process and the mounted persistence backend. It performs no
// authorization: that is each consumer's job. All methods are safe for
// concurrent use.
type Service struct {
	cfg  Config
	live *session.Registry

	mu      sync.RWMutex
	binding Binding
	nextID  uint64
	engine  SearchEngine
	closed  bool
}

// New validates cfg and returns a service over the live registry with no
// persistence mounted and search disabled. Invalid configuration fails with
// INVALID_CONFIG, so a composition never publishes a misconfigured service.
func New(cfg Config, live *session.Registry) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if live == nil {
		return nil, Errorf(CodeInvalidConfig, "session-query: a live session registry is required")
	}
	return &Service{cfg: cfg, live: live}, nil
}

// Config returns the validated configuration.
func (s *Service) Config() Config { return s.cfg }

// Live returns the registry of this process's live sessions, which always
// take precedence over their persisted copies.
func (s *Service) Live() *session.Registry { return s.live }

// Mount binds p as the persistence backend, replacing any other, and returns
// the function that unbinds it. Unmounting after a replacement leaves the
// replacement in place. Mount(nil) unbinds whatever is mounted.
func (s *Service) Mount(p Persistence) (unmount func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := s.nextID
	s.binding = Binding{ID: id, Persistence: p}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.binding.ID != id {
				return
			}
			s.nextID++
			s.binding = Binding{ID: s.nextID}
		})
	}
}

// Binding returns the persistence binding in force now. Its ID differs from
// every earlier binding's, so a search index can tell a backend swap from a
// quiet backend.
func (s *Service) Binding() Binding {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.binding
}

func (s *Service) persistence() Persistence { return s.Binding().Persistence }

// SetEngine installs the full-text provider; nil disables search. The
// service owns the engine from then on and closes it in Close.
func (s *Service) SetEngine(e SearchEngine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.engine = e
}

// SearchSessions delegates to the search engine; without one it fails with
// SEARCH_DISABLED.
func (s *Service) SearchSessions(ctx context.Context, req SessionSearchRequest) (SessionSearchPage, error) {
	e := s.searchEngine()
	if e == nil {
		return SessionSearchPage{}, searchDisabled()
	}
	return e.SearchSessions(ctx, req)
}

// SearchEvents delegates to the search engine; without one it fails with
// SEARCH_DISABLED.
func (s *Service) SearchEvents(ctx context.Context, req EventSearchRequest) (EventSearchPage, error) {
	e := s.searchEngine()
	if e == nil {
		return EventSearchPage{}, searchDisabled()
	}
	return e.SearchEvents(ctx, req)
}

func (s *Service) searchEngine() SearchEngine {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.engine
}

func searchDisabled() *Error {
	return Errorf(CodeSearchDisabled, `session search is disabled: this deployment configures the session-query index with openAt "never"`)
}

// Close closes the search engine, if any, and disables search. It is
// idempotent; exact reads keep working because they own no resources.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	e := s.engine
	s.engine = nil
	s.mu.Unlock()
	if e == nil {
		return nil
	}
	return e.Close()
}
