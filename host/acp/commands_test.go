package acp

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

func commandNames(cmds []sdk.AvailableCommand) []string {
	var out []string
	for _, c := range cmds {
		name := c.Name
		if c.Input != nil && c.Input.Unstructured != nil {
			name += " <" + c.Input.Unstructured.Hint + ">"
		}
		if c.Description == "" {
			name += " (no description)"
		}
		out = append(out, name)
	}
	return out
}

// fakeSearch answers /search with one hit and records the request.
type fakeSearch struct {
	got []sessionquery.SessionSearchRequest
	hit sessionquery.SessionHit
}

func (f *fakeSearch) SearchSessions(_ context.Context, req sessionquery.SessionSearchRequest) (sessionquery.SessionSearchPage, error) {
	f.got = append(f.got, req)
	return sessionquery.SessionSearchPage{Items: []sessionquery.SessionHit{f.hit}}, nil
}

func TestSessionsAnnounceTheirCommandsOnNewLoadAndResume(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	cwd := workspace(t)
	id := h.newSession(cwd)
	want := []string{"compact", "fork", "title <the new title>", "status"}
	if got := commandNames(h.c.commandsOf(t, id)); !slices.Equal(got, want) {
		t.Errorf("after session/new: %v, want %v", got, want)
	}
	w.provider.add(reply("", "hi"))
	if _, err := h.prompt(id, "hello"); err != nil {
		t.Fatal(err)
	}
	for _, reopen := range []func() error{
		func() error {
			_, err := h.conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}})
			return err
		},
		func() error {
			_, err := h.conn.ResumeSession(h.ctx, sdk.ResumeSessionRequest{SessionId: id, Cwd: cwd})
			return err
		},
	} {
		if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
			t.Fatal(err)
		}
		h.c.mu.Lock()
		delete(h.c.commands, id)
		h.c.mu.Unlock()
		if err := reopen(); err != nil {
			t.Fatal(err)
		}
		// Announced before the answer.
		h.c.mu.Lock()
		got := commandNames(h.c.commands[id])
		h.c.mu.Unlock()
		if !slices.Equal(got, want) {
			t.Errorf("after reopening: %v, want %v", got, want)
		}
	}

	ws := newWorld(t)
	hs := start(t, ws, func(su *setup) { su.b.Search = &fakeSearch{} })
	sid := hs.newSession(workspace(t))
	if got := commandNames(hs.c.commandsOf(t, sid)); !slices.Contains(got, "search <words to look for>") {
		t.Errorf("with search mounted: %v", got)
	}
}

// A command runs in dsh: the model is never called (its script is empty)
// and nothing of it enters the conversation.
func TestTitleCommandRenamesTheSessionWithoutTheModel(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	resp, err := h.prompt(id, "/title  Fix the flaky upload test ")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("answer = %v, %v", resp.StopReason, err)
	}
	got := kinds(h.c.take())
	want := []string{"session_info_update:Fix the flaky upload test", "agent_message_chunk:Renamed this session to “Fix the flaky upload test”."}
	if !slices.Equal(got, want) {
		t.Errorf("updates = %q\nwant %q", got, want)
	}
	for _, e := range w.agent(string(id)).Session().Events(0) {
		if e.Type == session.TypeUserMessage || e.Type == session.TypeTurnStart {
			t.Errorf("the command entered the conversation: %s", e.Type)
		}
	}
	if resp, _ := h.prompt(id, "/title"); resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("an empty title answered %v", resp.StopReason)
	}
	if got := kinds(h.c.take()); len(got) != 1 || !strings.Contains(got[0], "Give the new title") {
		t.Errorf("empty title = %q", got)
	}
}

// Only the offered names are commands: anything else starting with a slash
// is a prompt.
func TestUnknownSlashTextGoesToTheModel(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(reply("", "It is a directory."), reply("", "Titled?"))
	for _, text := range []string{"/usr/local/bin: what is it?", "/titles are what?"} {
		if resp, err := h.prompt(id, text); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("%q answered %v, %v", text, resp.StopReason, err)
		}
	}
	if got := kinds(h.c.take()); !slices.Contains(got, "agent_message_chunk:It is a directory.") || !slices.Contains(got, "agent_message_chunk:Titled?") {
		t.Errorf("updates = %q", got)
	}
}

func TestStatusCommandShowsModelModeAndTokens(t *testing.T) {
	w := newWorld(t)
	h := start(t, w, func(su *setup) {
		su.b.Models = []llm.ModelInfo{{ID: "fake-small", Name: "Fake Small", ContextWindow: 10000}}
	})
	id := h.newSession(workspace(t))
	w.provider.add(chunks(textDelta("hi"), llm.Chunk{Type: llm.ChunkUsage, Usage: &session.Usage{InputTokens: 1500, OutputTokens: 500, CacheReadTokens: 500}}, finish(llm.FinishStop)))
	if _, err := h.prompt(id, "hello"); err != nil {
		t.Fatal(err)
	}
	h.c.take()
	if _, err := h.prompt(id, "/status"); err != nil {
		t.Fatal(err)
	}
	ns := h.c.take()
	if len(ns) != 1 || ns[0].Update.AgentMessageChunk == nil {
		t.Fatalf("updates = %q", kinds(ns))
	}
	text := ns[0].Update.AgentMessageChunk.Content.Text.Text
	for _, want := range []string{"Session `" + string(id) + "`", "- title: hello", "- model: fake-small", "- mode: default", "- turns: 1", "- context: 2500 of 10000 tokens (25%)", "- tokens: in 1500 · out 500 · cache read 500"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
}

func TestForkCommandPersistsACopyAndSaysWhere(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	w.provider.add(reply("", "hi"))
	if _, err := h.prompt(id, "hello"); err != nil {
		t.Fatal(err)
	}
	h.c.take()
	if _, err := h.prompt(id, "/fork"); err != nil {
		t.Fatal(err)
	}
	ns := h.c.take()
	if len(ns) != 1 || ns[0].Update.AgentMessageChunk == nil {
		t.Fatalf("updates = %q", kinds(ns))
	}
	text := ns[0].Update.AgentMessageChunk.Content.Text.Text
	closed := w.closedIDs()
	if len(closed) != 1 || !strings.Contains(text, "Forked this session into "+closed[0]) {
		t.Fatalf("message %q, closed %v", text, closed)
	}
	h2, events, err := w.disk.Inspect(context.Background(), closed[0])
	if err != nil || h2.ParentSession == nil || *h2.ParentSession != string(id) || len(events) == 0 {
		t.Errorf("fork = %+v with %d events, %v", h2, len(events), err)
	}
}

func TestCompactCommandOnAShortSessionSaysThereIsNothingToCompact(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	if _, err := h.prompt(id, "/compact"); err != nil {
		t.Fatal(err)
	}
	if got := kinds(h.c.take()); !slices.Equal(got, []string{"agent_message_chunk:Nothing to compact yet: the conversation is too short."}) {
		t.Errorf("updates = %q", got)
	}
}

func TestSearchCommandListsMatchesOfThisWorkspace(t *testing.T) {
	w := newWorld(t)
	search := &fakeSearch{}
	h := start(t, w, func(su *setup) { su.b.Search = search })
	cwd := workspace(t)
	old := h.newSession(cwd)
	w.provider.add(reply("", "ok"))
	if _, err := h.prompt(old, "the upload test is flaky"); err != nil {
		t.Fatal(err)
	}
	search.hit = sessionquery.SessionHit{
		SessionRecord: sessionquery.SessionRecord{Header: w.agent(string(old)).Session().Header()},
		BestMatch:     sessionquery.EventHit{Snippet: "the [upload]\n test is flaky"},
	}
	id := h.newSession(cwd)
	h.c.take()
	if _, err := h.prompt(id, "/search upload flaky"); err != nil {
		t.Fatal(err)
	}
	ns := h.c.take()
	if len(ns) != 1 || ns[0].Update.AgentMessageChunk == nil {
		t.Fatalf("updates = %q", kinds(ns))
	}
	text := ns[0].Update.AgentMessageChunk.Content.Text.Text
	if want := "- **the upload test is flaky** `" + string(old) + "`\n  the [upload] test is flaky"; !strings.Contains(text, want) {
		t.Errorf("search answer lacks %q:\n%s", want, text)
	}
	if len(search.got) != 1 || search.got[0].Query != "upload flaky" || len(search.got[0].SessionFilters) != 1 ||
		*search.got[0].SessionFilters[0].NullableValues[0] != cwd {
		t.Errorf("search request = %+v", search.got)
	}
}
