package compositions

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestLastEventTimeReadsTheLastCompleteLine(t *testing.T) {
	header := `{"type":"session","version":0,"id":"x","createdAt":5}` + "\n"
	event := func(ms int, pad int) string {
		return `{"type":"turn/start","seq":0,"time":` + itoa(ms) + `,"data":{"pad":"` + strings.Repeat("p", pad) + `"}}` + "\n"
	}
	cases := []struct {
		name    string
		content string
		want    int64
		ok      bool
	}{
		{"header only", header, 0, false},
		{"events", header + event(10, 0) + event(20, 0), 20, true},
		{"torn last line", header + event(10, 0) + `{"type":"turn/end","seq":1,"ti`, 10, true},
		{"last line longer than the first window", header + event(10, 0) + event(30, 3*tailWindow), 30, true},
		{"empty file", "", 0, false},
		{"not json", header + "garbage\n", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "session.jsonl")
			if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, ok := lastEventTime(p)
			if got != tc.want || ok != tc.ok {
				t.Errorf("lastEventTime = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := lastEventTime(filepath.Join(t.TempDir(), "missing.jsonl")); ok {
		t.Error("a missing log reported a time")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestLastActivityOfLiveAndPersistedSessions(t *testing.T) {
	cfg, cwd := loadConfig(t, "default", "runtime.clock=fixed", "runtime.fixed_time_ms=1700000000000")
	rt := newRuntime(t, ACP, cfg)
	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rt.LastActivity(t.Context(), a.ID()); ok {
		t.Error("a session without events reported activity")
	}
	if _, err := a.Session().Append(session.TypeTodoWrite, session.TodoWrite{Todos: []session.Todo{}}); err != nil {
		t.Fatal(err)
	}
	want := time.UnixMilli(1_700_000_000_000)
	if at, ok := rt.LastActivity(t.Context(), a.ID()); !ok || !at.Equal(want) {
		t.Errorf("live: %v, %v", at, ok)
	}
	id := a.ID()
	if err := rt.CloseSession(a); err != nil {
		t.Fatal(err)
	}
	if at, ok := rt.LastActivity(t.Context(), id); !ok || !at.Equal(want) {
		t.Errorf("persisted: %v, %v", at, ok)
	}
	if _, ok := rt.LastActivity(t.Context(), "00000000-0000-4000-8000-0000000000ff"); ok {
		t.Error("an unknown session reported activity")
	}
}

func TestServeACPNeedsAnACPRuntime(t *testing.T) {
	cfg, _ := loadConfig(t, "default")
	rt := newRuntime(t, Headless, cfg)
	if err := ServeACP(t.Context(), rt, strings.NewReader(""), io.Discard, "v"); err == nil {
		t.Fatal("ServeACP accepted a headless runtime")
	}
}
