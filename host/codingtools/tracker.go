package codingtools

import "sync"

// fileTracker remembers, per session, which files the model has seen. It is
// the basis of read-before-edit: write and edit refuse to touch an existing
// file the session has not read, or one whose Version changed since (its
// size or modification time on disk, its text in a client's buffer).
type fileTracker struct {
	mu       sync.Mutex
	sessions map[string]map[string]Version
}

func newFileTracker() *fileTracker {
	return &fileTracker{sessions: map[string]map[string]Version{}}
}

// record notes that session has seen path (a real path) at version v.
func (t *fileTracker) record(session, path string, v Version) {
	t.mu.Lock()
	defer t.mu.Unlock()
	files := t.sessions[session]
	if files == nil {
		files = map[string]Version{}
		t.sessions[session] = files
	}
	files[path] = v
}

// lookup returns the version recorded for path in session.
func (t *fileTracker) lookup(session, path string) (Version, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.sessions[session][path]
	return s, ok
}

// forget drops everything recorded for session.
func (t *fileTracker) forget(session string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sessions, session)
}
