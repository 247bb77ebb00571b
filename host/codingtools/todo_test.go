package codingtools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestTodoWriteAppendsTheWholeListToTheSession(t *testing.T) {
	s := testSet(t, nil)
	live := newLive(t, "s1", "/w")
	got := s.mustExec(t, mkCall(t, "todo_write", live, "/w", map[string]any{"todos": []map[string]any{
		{"content": "Write the parser", "status": "completed"},
		{"content": " Test it ", "status": "in_progress"},
		{"content": "Document it", "status": "pending"},
	}}))
	want := "Todo list updated: 1 completed, 1 in progress, 1 pending.\n[x] Write the parser\n[>] Test it\n[ ] Document it"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	events := live.Events(0)
	if len(events) != 1 || events[0].Type != session.TypeTodoWrite {
		t.Fatalf("events = %+v", events)
	}
	wantData := `{"todos":[{"content":"Write the parser","status":"completed"},{"content":"Test it","status":"in_progress"},{"content":"Document it","status":"pending"}]}`
	if string(events[0].Data) != wantData {
		t.Errorf("data = %s", events[0].Data)
	}

	if got := s.mustExec(t, mkCall(t, "todo_write", live, "/w", map[string]any{"todos": []any{}})); got != "Todo list cleared." {
		t.Errorf("clear = %q", got)
	}
	var cleared session.TodoWrite
	if err := json.Unmarshal(live.Events(1)[0].Data, &cleared); err != nil || cleared.Todos == nil || len(cleared.Todos) != 0 {
		t.Errorf("cleared list = %s (%v), want an empty array", live.Events(1)[0].Data, err)
	}
}

func TestTodoWriteErrors(t *testing.T) {
	s := testSet(t, nil)
	live := newLive(t, "s1", "/w")
	cases := []struct {
		name      string
		live      *session.Live
		args      map[string]any
		code      string
		fragments []string
	}{
		{"bad status", live, map[string]any{"todos": []map[string]any{{"content": "x", "status": "done"}}}, CodeInvalidArgs, []string{`todos[0].status`, `"done"`}},
		{"empty content", live, map[string]any{"todos": []map[string]any{{"content": " ", "status": "pending"}}}, CodeInvalidArgs, []string{"todos[0].content is empty"}},
		{"missing list", live, map[string]any{}, CodeInvalidArgs, []string{"todos is required"}},
		{"no session", nil, map[string]any{"todos": []any{}}, CodeNoSession, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.exec(t, context.Background(), mkCall(t, "todo_write", tc.live, "/w", tc.args))
			wantCode(t, err, tc.code, tc.fragments...)
		})
	}
	if live.Len() != 0 {
		t.Errorf("failed calls appended %d events", live.Len())
	}
}
