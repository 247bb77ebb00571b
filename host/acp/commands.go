package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// command is a slash command the editor offers: a prompt that starts with
// /name runs it instead of going to the model. Its answer is an agent
// message; nothing of it is sent to the model.
type command struct {
	name, description string
	// hint is the input hint; "" for a command that takes no input.
	hint string
	run  func(s *server, ctx context.Context, ss *sess, arg string) string
}

// commands is what the connection offers, in the order the editor lists
// them; search only when the session-query search is mounted.
func (s *server) commands() []command {
	out := []command{
		{name: "compact", description: "Summarize older history to free context", run: (*server).compactCommand},
		{name: "fork", description: "Copy this session into a new one, to continue there from here", run: (*server).forkCommand},
		{name: "title", description: "Rename this session", hint: "the new title", run: (*server).titleCommand},
		{name: "status", description: "Show the session's model, mode, context use and tokens", run: (*server).statusCommand},
	}
	if s.b.Search != nil {
		out = append(out, command{name: "search", description: "Search the past sessions of this workspace", hint: "words to look for", run: (*server).searchCommand})
	}
	return out
}

// commandsUpdate is the available_commands_update of the connection.
func (s *server) commandsUpdate() sdk.SessionUpdate {
	cmds := s.commands()
	list := make([]sdk.AvailableCommand, len(cmds))
	for i, c := range cmds {
		list[i] = sdk.AvailableCommand{Name: c.name, Description: c.description}
		if c.hint != "" {
			list[i].Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.hint}}
		}
	}
	return sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: list}}
}

// parseCommand finds the command a prompt invokes: one text block that
// starts with /name, then the end or white space. Anything else, an unknown
// /name included (a path, say), is a prompt for the model.
func (s *server) parseCommand(blocks []sdk.ContentBlock) (command, string, bool) {
	if len(blocks) != 1 || blocks[0].Text == nil || !strings.HasPrefix(blocks[0].Text.Text, "/") {
		return command{}, "", false
	}
	line := blocks[0].Text.Text[1:]
	name, arg, _ := strings.Cut(line, " ")
	if i := strings.IndexAny(name, "\t\r\n"); i >= 0 {
		name, arg = name[:i], line[i+1:]
	}
	for _, c := range s.commands() {
		if c.name == name {
			return c, strings.TrimSpace(arg), true
		}
	}
	return command{}, "", false
}

// runCommand runs c in the session's prompt slot (so its answer never
// interleaves with a turn's) and answers end_turn, or cancelled when the
// client cancelled it.
func (s *server) runCommand(ctx context.Context, ss *sess, c command, arg string) (sdk.PromptResponse, error) {
	run, err := ss.begin(ctx, s.b.NewID())
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	stop := context.AfterFunc(ctx, func() { ss.cancel(run) })
	text := c.run(s, ctx, ss, arg)
	stop()
	ss.out.Push(sdk.UpdateAgentMessageText(text))
	ss.flush()
	ss.release(run)
	if ctx.Err() != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

func (s *server) compactCommand(ctx context.Context, ss *sess, _ string) string {
	err := ss.agent.Compact(ctx)
	var ce *agent.CompactionError
	switch {
	case err == nil:
		return "Compacted the conversation: older history is now a summary."
	case ctx.Err() != nil:
		return "Compaction cancelled; the conversation is unchanged."
	case errors.Is(err, agent.ErrBusy):
		return "Cannot compact while a turn runs: wait for it to finish, or cancel it, then try /compact again."
	case errors.Is(err, agent.ErrNothingToCompact):
		return "Nothing to compact yet: the conversation is too short."
	case errors.As(err, &ce):
		return fmt.Sprintf("Compaction failed, the conversation is unchanged: %v", ce.Cause)
	default:
		return fmt.Sprintf("Compaction failed: %v", err)
	}
}

func (s *server) forkCommand(ctx context.Context, ss *sess, _ string) string {
	fork, err := s.b.Sessions.ForkSession(ctx, ss.id, session.ForkLatest)
	if err != nil {
		return fmt.Sprintf("Fork failed: %v", err)
	}
	id := fork.ID()
	// The fork is persisted; closing it releases its log for whoever opens
	// it next (this editor's session history, dsh --resume).
	if err := s.b.Sessions.CloseSession(fork); err != nil {
		return fmt.Sprintf("Forked into session %s, but closing it failed: %v", id, err)
	}
	return fmt.Sprintf("Forked this session into %s. Open it from the session history to continue there; this session is unchanged.", id)
}

func (s *server) titleCommand(_ context.Context, ss *sess, arg string) string {
	title := session.NormalizeTitle(arg, 0)
	if title == "" {
		return "Give the new title, e.g. /title fix the flaky upload test"
	}
	data := session.SessionTitle{Title: title, MessageSeqs: []int{}, Source: json.RawMessage(`{"kind":"user"}`)}
	if _, err := ss.live.Append(session.TypeSessionTitle, data); err != nil {
		return fmt.Sprintf("Renaming failed: %v", err)
	}
	if err := ss.live.Flush(); err != nil {
		return fmt.Sprintf("The new title was not saved: %v", err)
	}
	return "Renamed this session to “" + title + "”."
}

func (s *server) statusCommand(_ context.Context, ss *sess, _ string) string {
	h, events := ss.live.Snapshot()
	model, effort := ss.agent.Model()
	if effort != "" {
		model += " (reasoning effort " + effort + ")"
	}
	var in, out, cache, turns int
	title := ""
	for _, e := range events {
		switch e.Type {
		case session.TypeAssistantMessage:
			var d session.AssistantMessage
			if e.DecodeData(&d) == nil && d.Usage != nil {
				in, out, cache = in+d.Usage.InputTokens, out+d.Usage.OutputTokens, cache+d.Usage.CacheReadTokens
			}
		case session.TypeTurnStart:
			turns++
		case session.TypeSessionTitle:
			var d session.SessionTitle
			if e.DecodeData(&d) == nil && d.Title != "" {
				title = d.Title
			}
		}
	}
	lines := []string{
		"Session `" + h.ID + "`",
		"",
		"- title: " + orDash(title),
		"- workspace: " + h.CwdOrEmpty(),
		"- model: " + model,
		"- mode: " + string(s.b.Permissions.Mode(ss.id)),
		fmt.Sprintf("- turns: %d · events: %d", turns, len(events)),
	}
	if u, ok := usageOf(events, s.contextWindow); ok {
		lines = append(lines, fmt.Sprintf("- context: %d of %d tokens (%.0f%%)", u.Used, u.Size, 100*float64(u.Used)/float64(u.Size)))
	}
	lines = append(lines, fmt.Sprintf("- tokens: in %d · out %d · cache read %d", in, out, cache))
	if p := h.ParentSession; p != nil {
		lines = append(lines, "- forked from: "+*p)
	}
	return strings.Join(lines, "\n")
}

// searchLimit is how many sessions /search lists.
const searchLimit = 10

func (s *server) searchCommand(ctx context.Context, ss *sess, arg string) string {
	if arg == "" {
		return "Give the words to look for, e.g. /search flaky upload test"
	}
	cwd := ss.cwd
	page, err := s.b.Search.SearchSessions(ctx, sessionquery.SessionSearchRequest{
		Query:          arg,
		SessionFilters: []sessionquery.SessionFilter{{Kind: sessionquery.KindCwd, NullableValues: []*string{&cwd}}},
		Limit:          sdk.Ptr(searchLimit + 1),
	})
	if err != nil {
		return fmt.Sprintf("Search failed: %v", err)
	}
	// The session asking is not a past one.
	page.Items = slices.DeleteFunc(page.Items, func(h sessionquery.SessionHit) bool { return h.Header.ID == ss.id })
	if len(page.Items) > searchLimit {
		page.Items, page.NextCursor = page.Items[:searchLimit], sdk.Ptr("")
	}
	if len(page.Items) == 0 {
		return "No past session of this workspace matches “" + arg + "”."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Sessions of this workspace matching “%s”:\n", arg)
	titles := s.titlesOf(ctx, page.Items)
	for _, hit := range page.Items {
		title := "(untitled)"
		if t := titles[hit.Header.ID]; t != "" {
			title = t
		}
		fmt.Fprintf(&b, "\n- **%s** `%s`", title, hit.Header.ID)
		if snip := strings.Join(strings.Fields(hit.BestMatch.Snippet), " "); snip != "" {
			fmt.Fprintf(&b, "\n  %s", clip(snip, 300))
		}
	}
	if page.NextCursor != nil {
		fmt.Fprintf(&b, "\n\nMore sessions match; add words to narrow the search.")
	}
	return b.String()
}

// titlesOf reads the hits' titles in one batch; a session whose log
// cannot be read is listed untitled.
func (s *server) titlesOf(ctx context.Context, hits []sessionquery.SessionHit) map[string]string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Header.ID
	}
	out := map[string]string{}
	results, err := s.b.Catalog.ReadTitleSnapshots(ctx, ids)
	if err != nil {
		s.log.Warn("acp: session titles not readable", "err", err)
		return out
	}
	for _, r := range results {
		if r.Status == sessionquery.Fulfilled && r.Value != nil && r.Value.Title != nil {
			out[r.SessionID] = r.Value.Title.Title
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
