package compositions

import (
	"io"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// The runtime's query service serves every listing from the index's
// catalog: a live session's summary while it runs, its persisted one
// after it closed, with the time of its last event.
func TestSummariesOfLiveAndPersistedSessions(t *testing.T) {
	cfg, cwd := loadConfig(t, "default", "runtime.clock=fixed", "runtime.fixed_time_ms=1700000000000")
	rt := newRuntime(t, ACP, cfg)
	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	summary := func() sessionquery.SessionSummary {
		t.Helper()
		page, err := rt.Query.ListSummaries(t.Context(), sessionquery.SummaryRequest{Cwds: []string{cwd}})
		if err != nil || len(page.Items) != 1 || page.Total != 1 {
			t.Fatalf("summaries = %+v, %v", page, err)
		}
		return page.Items[0]
	}
	if s := summary(); !s.Live || s.Events != 0 || s.LastEventAt != 0 {
		t.Errorf("a session without events: %+v", s)
	}
	if _, err := a.Session().Append(session.TypeTodoWrite, session.TodoWrite{Todos: []session.Todo{}}); err != nil {
		t.Fatal(err)
	}
	if s := summary(); !s.Live || s.Events != 1 || s.LastEventAt != 1_700_000_000_000 {
		t.Errorf("live: %+v", s)
	}
	if err := rt.CloseSession(a); err != nil {
		t.Fatal(err)
	}
	if s := summary(); s.Live || !s.Persisted || s.Events != 1 || s.LastEventAt != 1_700_000_000_000 || s.LogBytes == 0 {
		t.Errorf("persisted: %+v", s)
	}
}

func TestServeACPNeedsAnACPRuntime(t *testing.T) {
	cfg, _ := loadConfig(t, "default")
	rt := newRuntime(t, Headless, cfg)
	if err := ServeACP(t.Context(), rt, strings.NewReader(""), io.Discard, "v"); err == nil {
		t.Fatal("ServeACP accepted a headless runtime")
	}
}
