package sessionquery

import (
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Config is the base service configuration.
type Config struct {
	// ReadWindowMax bounds ReadEvent's before/after (default 50, >= 0).
	ReadWindowMax int
	// PersistedInspectConcurrency bounds title-batch inspections (default 4).
	PersistedInspectConcurrency int
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{ReadWindowMax: 50, PersistedInspectConcurrency: 4}
}

// Binding is the persistence backend mounted at one moment, with an identity
// that changes on every mount, unmount or replacement.
type Binding struct {
	ID          uint64
	Persistence Persistence // nil when nothing is mounted
}

// Service is the trusted session-query service over the live sessions of
// this process and the mounted persistence backend. It performs no
// authorization: that is each consumer's job.
type Service struct {
	cfg  Config
	live *session.Registry

	mu      sync.RWMutex
	binding Binding
	nextID  uint64
	engine  SearchEngine
}
