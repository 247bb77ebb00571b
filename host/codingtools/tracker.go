package codingtools

import (
	"os"
	"sync"
	"time"
)

// stamp is what a file looked like when the session last read or wrote it.
type stamp struct {
	size    int64
	modTime time.Time
}

func stampOf(fi os.FileInfo) stamp { return stamp{size: fi.Size(), modTime: fi.ModTime()} }

func (s stamp) matches(fi os.FileInfo) bool {
	return s.size == fi.Size() && s.modTime.Equal(fi.ModTime())
}

// fileTracker remembers, per session, which files the model has seen. It is
// the basis of read-before-edit: write and edit refuse to touch an existing
// file the session has not read, or one whose size or modification time
// changed since.
type fileTracker struct {
	mu       sync.Mutex
	sessions map[string]map[string]stamp
}

func newFileTracker() *fileTracker {
	return &fileTracker{sessions: map[string]map[string]stamp{}}
}

// record notes that session has seen path (a real path) as fi describes it.
func (t *fileTracker) record(session, path string, fi os.FileInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	files := t.sessions[session]
	if files == nil {
		files = map[string]stamp{}
		t.sessions[session] = files
	}
	files[path] = stampOf(fi)
}

// lookup returns the stamp recorded for path in session.
func (t *fileTracker) lookup(session, path string) (stamp, bool) {
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
