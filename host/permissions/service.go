package permissions

import (
	"sync"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// ServiceKey is the host service front ends use to read and switch modes.
var ServiceKey = host.NewKey[*Service]("permissions")

// ModeChange reports a session's mode changing.
type ModeChange struct {
	SessionID string
	Mode      Mode
}

// grantScope is how far an "allow always" answer reaches.
type grantScope int

const (
	grantNone      grantScope = iota
	grantWorkspace            // calls touching only workspace paths
	grantAnywhere             // also calls touching paths outside it
)

// Service is the permission state of one activation: the default mode,
// per-session overrides and grants, and extra roots reads may use freely.
type Service struct {
	reg *tools.Registry
	def Mode

	mu      sync.Mutex
	modes   map[string]Mode
	grants  map[string]map[string]grantScope // session -> tool -> scope
	trusted map[int]trustedRoot
	// protected holds dsh's own data dirs (see Protect).
	protected map[int]string
	nextID    int
	// sandbox reports what sandboxed commands enforce (see UseSandbox).
	sandbox func() sandbox.Support

	changes hook.Observers[ModeChange]
}

// New returns a service whose sessions start in mode def and which asks
// through reg's approver.
func New(reg *tools.Registry, def Mode) *Service {
	return &Service{
		reg:       reg,
		def:       def,
		modes:     map[string]Mode{},
		grants:    map[string]map[string]grantScope{},
		trusted:   map[int]trustedRoot{},
		protected: map[int]string{},
	}
}

// DefaultMode returns the configured mode new sessions start in.
func (s *Service) DefaultMode() Mode { return s.def }

// Mode returns the session's current mode.
func (s *Service) Mode(sessionID string) Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.modes[sessionID]; ok {
		return m
	}
	return s.def
}

// SetMode switches the session to m and notifies subscribers when it
// changed.
func (s *Service) SetMode(sessionID string, m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	s.mu.Lock()
	prev, ok := s.modes[sessionID]
	if !ok {
		prev = s.def
	}
	s.modes[sessionID] = m
	s.mu.Unlock()
	if prev != m {
		s.changes.Emit(ModeChange{SessionID: sessionID, Mode: m}, nil)
	}
	return nil
}

// OnModeChange registers fn for every mode switch.
func (s *Service) OnModeChange(fn func(ModeChange)) (unsubscribe func()) {
	return s.changes.Subscribe(fn)
}

// Forget drops the session's mode override and grants.
func (s *Service) Forget(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.modes, sessionID)
	delete(s.grants, sessionID)
}

// Grant remembers an "allow always" answer for tool in the session; outside
// widens it to calls touching paths outside the workspace.
func (s *Service) Grant(sessionID, tool string, outside bool) {
	scope := grantWorkspace
	if outside {
		scope = grantAnywhere
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.grants[sessionID]
	if g == nil {
		g = map[string]grantScope{}
		s.grants[sessionID] = g
	}
	if scope > g[tool] {
		g[tool] = scope
	}
}

func (s *Service) granted(sessionID, tool string, outside bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope := s.grants[sessionID][tool]
	if outside {
		return scope >= grantAnywhere
	}
	return scope >= grantWorkspace
}

// TrustReadRoot lets read-only tools of the session sessionID use paths
// under dir (for example that session's private spill directory) without
// asking, as if inside the workspace; other sessions get the ordinary
// rules. Writes there follow the ordinary rules too.
func (s *Service) TrustReadRoot(sessionID, dir string) (remove func()) {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.trusted[id] = trustedRoot{session: sessionID, dir: dir}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.trusted, id)
	}
}

// trustedRoot is a directory one session reads freely.
type trustedRoot struct{ session, dir string }

// trustedRoots returns the directories the session reads freely.
func (s *Service) trustedRoots(sessionID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, t := range s.trusted {
		if t.session == sessionID {
			out = append(out, t.dir)
		}
	}
	return out
}
