package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
	sqtools "github.com/seed-e9b4dba4/dsh/plugins/sessionquery"
)

// TestCrossWorkspaceProbesCannotTellForeignFromMissing composes an ACP
// runtime with the session-query profile and two workspaces. From a
// session in the first, every session-query tool is pointed at a session
// of the other workspace that is persisted, one that is live in this very
// process, ids that do not exist and spellings of a foreign id: each tool
// answers byte for byte the same, and no answer carries the foreign text
// or id.
func TestCrossWorkspaceProbesCannotTellForeignFromMissing(t *testing.T) {
	replies := make([]fakellm.Reply, 4)
	for i := range replies {
		replies[i] = fakellm.Reply{Text: fmt.Sprintf("needle reply %d with classified detail", i)}
	}
	srv := fakellm.New(replies...)
	defer srv.Close()
	h := newHermetic(t)
	other := filepath.Join(h.root, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, compositions.ACP, h.config(t, "session-query", "llm.base_url="+srv.URL, "llm.api_key=k"))
	ctx := context.Background()
	prompt := func(cwd, text string, keep bool) *agent.Agent {
		t.Helper()
		a, err := rt.NewSession(ctx, cwd)
		if err != nil {
			t.Fatal(err)
		}
		a.Followup(agent.UserText(text, rt.NewID()))
		if err := a.WhenIdle(ctx); err != nil {
			t.Fatal(err)
		}
		if !keep {
			if err := rt.CloseSession(a); err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	mine := prompt(h.cwd, "needle in my own workspace", false).ID()
	// A child of mine, so that the parent filter has something to find.
	child, err := rt.ForkSession(ctx, mine, session.ForkLatest)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.CloseSession(child); err != nil {
		t.Fatal(err)
	}
	foreignPersisted := prompt(other, "needle classified elsewhere", false).ID()
	foreignLive := prompt(other, "needle classified and running", true).ID()
	caller := prompt(h.cwd, "the caller's own prompt", true)

	probes := []string{
		foreignPersisted,
		foreignLive,
		"00000000-0000-4000-8000-00000000dead",
		strings.ToUpper(foreignPersisted),
		"../" + foreignPersisted,
		foreignPersisted + " ",
		"no-such-session",
	}
	type call struct {
		tool string
		args func(id string) map[string]any
	}
	calls := []call{
		{sqtools.ToolEventSearch, func(id string) map[string]any { return map[string]any{"query": "needle", "session_id": id} }},
		{sqtools.ToolSessionTrace, func(id string) map[string]any { return map[string]any{"session_id": id} }},
		{sqtools.ToolEventTrace, func(id string) map[string]any { return map[string]any{"session_id": id, "seq": 1} }},
		{sqtools.ToolEventRead, func(id string) map[string]any { return map[string]any{"session_id": id, "seq": 1} }},
		{sqtools.ToolEventRead, func(id string) map[string]any {
			return map[string]any{"session_id": id, "seq": 1, "before": 3, "after": 3}
		}},
		{sqtools.ToolEventRead, func(id string) map[string]any { return map[string]any{"session_id": id, "seq": 999999} }},
		{sqtools.ToolSessionSearch, func(id string) map[string]any {
			return map[string]any{"query": "needle", "parent_session_ids": []string{id}}
		}},
	}
	n := 0
	run := func(c call, id string) tools.Result {
		raw, err := json.Marshal(c.args(id))
		if err != nil {
			t.Fatal(err)
		}
		n++
		return rt.Tools.Run(ctx, &tools.Call{CallID: fmt.Sprintf("c%d", n), Name: c.tool, Arguments: string(raw), Session: caller.Session(), Cwd: h.cwd})
	}
	type answer struct {
		IsError bool
		Text    string
		Error   tools.ErrorInfo
	}
	answerOf := func(r tools.Result) answer {
		a := answer{IsError: r.IsError, Text: resultText(r)}
		if r.Error != nil {
			a.Error = *r.Error
		}
		return a
	}
	for _, c := range calls {
		args, _ := json.Marshal(c.args("ID"))
		var first *answer
		for _, id := range probes {
			got := answerOf(run(c, id))
			for _, leak := range []string{"classified", foreignPersisted, foreignLive, strings.ToUpper(foreignPersisted)} {
				if strings.Contains(got.Text, leak) || strings.Contains(got.Error.Message, leak) {
					t.Errorf("%s %s with %q leaks %q: %.300s", c.tool, args, id, leak, got.Text)
				}
			}
			if first == nil {
				first = &got
				continue
			}
			if got != *first {
				t.Errorf("%s %s: %q answers\n%+v\nbut %q answers\n%+v", c.tool, args, id, got, probes[0], *first)
			}
		}
		// The same call on the caller's own workspace works, so the
		// identical answers are a denial, not a broken tool.
		if own := answerOf(run(c, mine)); own == *first {
			t.Errorf("%s %s: a session of the caller's workspace gets the denial too: %+v", c.tool, args, own)
		}
	}
}
