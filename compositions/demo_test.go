package compositions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// turnOutcome runs one prompt and returns the turn's end and the text and
// tool calls it produced.
func turnOutcome(t *testing.T, a *agent.Agent, text string) (session.TurnEndReason, string, []string) {
	t.Helper()
	start := a.Session().Len()
	a.Followup(agent.UserText(text, "msg-"+text))
	if err := a.WhenIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	var (
		end   session.TurnEndReason
		reply strings.Builder
		calls []string
	)
	for _, e := range a.Session().Events(start) {
		switch e.Type {
		case session.TypeAssistantMessage:
			var m session.AssistantMessage
			if err := e.DecodeData(&m); err != nil {
				t.Fatal(err)
			}
			reply.WriteString(session.JoinText(m.Message.Content))
		case session.TypeToolCall:
			var c session.ToolCall
			if err := e.DecodeData(&c); err != nil {
				t.Fatal(err)
			}
			calls = append(calls, c.Name+" "+c.Arguments)
		case session.TypeTurnEnd:
			var te session.TurnEnd
			if err := e.DecodeData(&te); err != nil {
				t.Fatal(err)
			}
			end = te.Reason
		}
	}
	return end, reply.String(), calls
}

func TestDemoProfilePlaysTheBundledConversationThenSaysItIsOver(t *testing.T) {
	cfg, cwd := loadConfig(t, "demo", "permissions.mode=bypass")
	if err := os.WriteFile(filepath.Join(cwd, "notes.md"), []byte("# Notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, ACP, cfg)
	rt.Provider.(*demoProvider).pace = 0
	for round := range 2 { // every session gets the whole script
		a, err := rt.NewSession(t.Context(), cwd)
		if err != nil {
			t.Fatal(err)
		}
		end, reply, _ := turnOutcome(t, a, "hello")
		if end.Kind != session.EndCompleted || !strings.Contains(reply, "keyless demo") {
			t.Fatalf("round %d greeting: %s %q", round, end.Kind, reply)
		}
		end, reply, calls := turnOutcome(t, a, "what is here?")
		if end.Kind != session.EndCompleted || !strings.Contains(reply, "That's the tour") {
			t.Fatalf("tour: %s %q", end.Kind, reply)
		}
		want := []string{`glob {"pattern":"*"}`, `bash {"command":"ls -la","description":"List the workspace"}`, `read {"file_path":"notes.md","limit":40}`}
		if strings.Join(calls, "\n") != strings.Join(want, "\n") {
			t.Errorf("tour tool calls =\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
		}
		if end, reply, _ = turnOutcome(t, a, "thanks"); end.Kind != session.EndCompleted || !strings.Contains(reply, "DEEPSEEK_API_KEY") {
			t.Fatalf("final answer: %s %q", end.Kind, reply)
		}
		end, _, _ = turnOutcome(t, a, "more?")
		if end.Kind != session.EndError || end.Error == nil || !strings.HasPrefix(end.Error.Message, "the demo script is over") {
			t.Fatalf("after the script: %+v", end)
		}
		if err := rt.CloseSession(a); err != nil {
			t.Fatal(err)
		}
	}
}

// In a workspace with no files, the demo still reads something sensible: it
// falls back to README.md, which fails as a plain tool error.
func TestDemoInAnEmptyWorkspaceStillFinishesTheTour(t *testing.T) {
	cfg, cwd := loadConfig(t, "demo", "permissions.mode=bypass")
	rt := newRuntime(t, ACP, cfg)
	rt.Provider.(*demoProvider).pace = 0
	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	turnOutcome(t, a, "hello")
	end, _, calls := turnOutcome(t, a, "look around")
	if end.Kind != session.EndCompleted || len(calls) != 3 || calls[2] != `read {"file_path":"README.md","limit":40}` {
		t.Fatalf("tour in an empty workspace: %s %v", end.Kind, calls)
	}
}
