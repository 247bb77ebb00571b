package acp

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// stuckSearch is a search that never finishes by itself: it returns only
// when its context ends, as a slow search over a huge history would if it
// honours cancellation.
type stuckSearch struct {
	once     sync.Once
	entered  chan struct{}
	returned chan error
}

func (s *stuckSearch) SearchSessions(ctx context.Context, _ sessionquery.SessionSearchRequest) (sessionquery.SessionSearchPage, error) {
	s.once.Do(func() { close(s.entered) })
	<-ctx.Done()
	s.returned <- ctx.Err()
	return sessionquery.SessionSearchPage{}, ctx.Err()
}

// TestInputEndMidSearchEndsServe closes the editor's side while /search is
// running (issue 14: dsh acp kept running after stdin closed mid-search):
// the search's context ends and Serve returns, rather than waiting for the
// search to finish.
func TestInputEndMidSearchEndsServe(t *testing.T) {
	w := newWorld(t)
	search := &stuckSearch{entered: make(chan struct{}), returned: make(chan error, 1)}
	h := start(t, w, func(su *setup) { su.b.Search = search })
	id := h.newSession(workspace(t))
	go func() { _, _ = h.prompt(id, "/search zebras") }()
	select {
	case <-search.entered:
	case <-time.After(2 * time.Minute):
		t.Fatal("/search never reached the search")
	}
	if err := h.stop(); err != nil { // fails the test if Serve does not return
		t.Fatalf("Serve = %v", err)
	}
	select {
	case err := <-search.returned:
		if err == nil {
			t.Error("the search returned without its context ending")
		}
	default:
		t.Error("Serve returned while the search was still running")
	}
}
