package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// translator turns one session's events into session/update payloads. stream
// is called for every appended event in log order (from the appending
// goroutine), replay for the events of a loaded log; the open-call table is
// shared with cancellation, hence its lock.
type translator struct {
	reg  *tools.Registry
	live *session.Live
	cwd  string
	// terminals reports whether the client shows command output in a
	// display-only terminal.
	terminals func() bool
	// buffers reports whether the client serves the text of a file, so a
	// preview diff against the disk may not be what the edit changes.
	buffers func(path string) bool

	usage usageTracker

	compacting bool // between compaction/start and compaction/end
	// midLine is set while the streamed reply text does not end with a
	// newline, so a notice starts on a line of its own.
	midLine bool

	mu   sync.Mutex
	open map[string]openCall // tool calls without a result, by call id
	ids  []string            // open call ids in start order
}

// openCall is what was shown for a started tool call.
type openCall struct {
	call     *tools.Call
	view     *tools.CallView
	terminal bool // shown as a terminal
	streamed bool // its output reached the terminal while it ran
	// clientTerminal is the id of the client terminal the command ran
	// in, which the card embeds.
	clientTerminal string
}

// isTerminal reports whether the open call id is shown as a terminal.
func (t *translator) isTerminal(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open[id].terminal
}

// ranInTerminal records that the open call id runs in the client's
// terminal terminalID.
func (t *translator) ranInTerminal(id, terminalID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if oc, ok := t.open[id]; ok {
		oc.clientTerminal = terminalID
		t.open[id] = oc
	}
}

// markStreamed records that the call's output was sent while it ran.
func (t *translator) markStreamed(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if oc, ok := t.open[id]; ok {
		oc.streamed = true
		t.open[id] = oc
	}
}

// newTranslator maps live's events; window resolves context windows for
// usage updates (see usage.go).
func newTranslator(reg *tools.Registry, live *session.Live, terminals func() bool, window func(model string, logged int) int) *translator {
	t := &translator{reg: reg, live: live, cwd: live.Header().CwdOrEmpty(), terminals: terminals, open: map[string]openCall{}}
	t.usage.window = window
	// A continued session's next step may reuse the last request context.
	_, events := live.Snapshot()
	for _, e := range events {
		if e.Type == session.TypeRequestContext {
			t.usage.observe(e)
		}
	}
	return t
}

// stream maps an event appended during a prompt: streamed deltas rather than
// committed messages, tool calls, plans, titles, retry notices, refusals and
// context use after each model step.
func (t *translator) stream(e session.Event) []sdk.SessionUpdate {
	switch e.Type {
	case session.TypeAssistantChunk:
		return t.chunk(e)
	case session.TypeCompactionStart:
		t.compacting = true
	case session.TypeCompactionEnd:
		t.compacting = false
	case session.TypeToolCall:
		return t.toolCall(e, true)
	case session.TypeToolResult:
		return t.toolResult(e, true)
	case session.TypeTodoWrite:
		return planUpdate(e)
	case session.TypeSessionTitle:
		return titleUpdate(e)
	case session.TypeLLMRetry:
		var d session.LLMRetry
		if e.DecodeData(&d) != nil {
			return nil
		}
		return []sdk.SessionUpdate{t.notice(retryNotice(d))}
	case session.TypeRequestContext, session.TypeAssistantMessage:
		if u, ok := t.usage.observe(e); ok {
			return []sdk.SessionUpdate{usageUpdate(u)}
		}
	case session.TypeTurnEnd:
		var d session.TurnEnd
		if e.DecodeData(&d) != nil || !isRefusal(&d.Reason) {
			return nil
		}
		return []sdk.SessionUpdate{t.notice(refusalNotice(d.Reason.Error))}
	}
	return nil
}

// notice is a bracketed line of dsh's own in the reply, on a line of its
// own.
func (t *translator) notice(text string) sdk.SessionUpdate {
	if t.midLine {
		text = "\n\n" + text
	}
	t.midLine = false
	return sdk.UpdateAgentMessageText(text)
}

// refusalNotice is what the provider said when its content filter stopped
// the reply.
func refusalNotice(f *session.Failure) string {
	return fmt.Sprintf("[the provider refused to continue: %s]\n\n", strings.TrimSpace(f.Message))
}

// replay maps an event of a loaded log: the committed conversation as the
// user saw it (their prompts, the assistant's messages, tool calls with
// their results, plans, titles and failed turns).
func (t *translator) replay(e session.Event) []sdk.SessionUpdate {
	switch e.Type {
	case session.TypeUserMessage:
		var m session.Message
		if e.DecodeData(&m) != nil || m.SourceKind() != session.SourceUser {
			return nil
		}
		var out []sdk.SessionUpdate
		for _, b := range m.Content {
			if b.Type == session.BlockText && b.Text != "" {
				out = append(out, sdk.UpdateUserMessageText(clip(b.Text, maxShownText)))
			}
		}
		return out
	case session.TypeAssistantMessage:
		var d session.AssistantMessage
		if e.DecodeData(&d) != nil {
			return nil
		}
		var out []sdk.SessionUpdate
		for _, b := range d.Message.Content {
			switch {
			case b.Type == session.BlockReasoning && b.Text != "":
				out = append(out, sdk.UpdateAgentThoughtText(clip(b.Text, maxShownText)))
			case b.Type == session.BlockText && b.Text != "":
				out = append(out, sdk.UpdateAgentMessageText(clip(b.Text, maxShownText)))
			}
		}
		return out
	case session.TypeToolCall:
		return t.toolCall(e, false)
	case session.TypeToolResult:
		return t.toolResult(e, false)
	case session.TypeTodoWrite:
		return planUpdate(e)
	case session.TypeSessionTitle:
		return titleUpdate(e)
	case session.TypeTurnEnd:
		var d session.TurnEnd
		if e.DecodeData(&d) != nil || d.Reason.Kind != session.EndError || d.Reason.Error == nil {
			return nil
		}
		if isRefusal(&d.Reason) {
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText("\n\n" + refusalNotice(d.Reason.Error))}
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(fmt.Sprintf("\n\n[turn failed: %s]\n\n", d.Reason.Error.Message))}
	}
	return nil
}

// chunk streams text and reasoning deltas of turn steps; a compaction's
// summary call (step 0, inside compaction/start..end) is not conversation.
func (t *translator) chunk(e session.Event) []sdk.SessionUpdate {
	if t.compacting {
		return nil
	}
	var d session.AssistantChunk
	if e.DecodeData(&d) != nil || d.Step == 0 {
		return nil
	}
	var c llm.Chunk
	if json.Unmarshal(d.Chunk, &c) != nil || c.Delta == "" {
		return nil
	}
	switch c.Type {
	case llm.ChunkTextDelta:
		t.midLine = !strings.HasSuffix(c.Delta, "\n")
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(c.Delta)}
	case llm.ChunkReasoningDelta:
		return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(c.Delta)}
	}
	return nil
}

// toolCall announces a call, with the tool's own card: kind,
// title, locations, raw input and, live (not in a replay), the proposed diff
// or the display terminal. The card is built on the appending goroutine,
// before the tool runs, so a diff shows the file as it was.
func (t *translator) toolCall(e session.Event, live bool) []sdk.SessionUpdate {
	var d session.ToolCall
	if e.DecodeData(&d) != nil {
		return nil
	}
	call := &tools.Call{
		CallID:    d.CallID,
		Name:      d.Name,
		Arguments: d.Arguments,
		Args:      tools.ParseArguments(d.Arguments),
		Location:  tools.Location{Turn: d.Turn, Step: d.Step},
		Session:   t.live,
		Cwd:       t.cwd,
	}
	view := presentFor(t.reg, call, t.buffers)
	terminal := live && view.Kind == tools.KindExecute && t.terminals != nil && t.terminals()
	t.mu.Lock()
	if _, dup := t.open[d.CallID]; !dup {
		t.ids = append(t.ids, d.CallID)
	}
	t.open[d.CallID] = openCall{call: call, view: view, terminal: terminal}
	t.mu.Unlock()
	// A live call is pending until it starts to run (it may first need the
	// user's approval); the executing hook then reports it in progress.
	status := sdk.ToolCallStatusPending
	if !live {
		status = sdk.ToolCallStatusInProgress
	}
	tc := sdk.SessionUpdateToolCall{
		ToolCallId: sdk.ToolCallId(d.CallID),
		Title:      view.Title,
		Kind:       sdk.ToolKind(view.Kind),
		Status:     status,
		Locations:  locations(view.Locations),
		RawInput:   shownInput(view.RawInput),
	}
	if live && view.Diff != nil {
		tc.Content = []sdk.ToolCallContent{shownDiff(view.Diff)}
	}
	if terminal {
		terminalCard(&tc, d.CallID, t.cwd)
	}
	return []sdk.SessionUpdate{{ToolCall: &tc}}
}

// toolResult completes or fails a call. A successful write or edit shows
// its diff; everything else shows the result's text (command output fenced
// as console text).
func (t *translator) toolResult(e session.Event, live bool) []sdk.SessionUpdate {
	var d session.ToolResult
	if e.DecodeData(&d) != nil || len(d.Message.Content) == 0 {
		return nil
	}
	block := d.Message.Content[0]
	id := block.ToolCallID
	t.mu.Lock()
	oc, known := t.open[id]
	t.forget(id)
	t.mu.Unlock()
	failed := block.IsError || d.Error != nil
	status := sdk.ToolCallStatusCompleted
	if failed {
		status = sdk.ToolCallStatusFailed
	}
	text := session.JoinText(block.Content)
	var diff *tools.Diff
	kind := tools.KindOther
	if known {
		kind = oc.view.Kind
		def, defined := t.reg.For(oc.call)
		switch {
		case failed:
		case live:
			diff = oc.view.Diff
		case defined && def.LoggedDiff != nil:
			// A replay cannot preview against the disk, which has moved
			// on; the logged call still tells what it changed.
			diff = def.LoggedDiff(oc.call)
		}
		if defined && def.PresentResult != nil {
			res := tools.Result{IsError: failed, Content: block.Content}
			if d.Error != nil {
				res.Error = &tools.ErrorInfo{Name: d.Error.Name, Code: d.Error.Code, Message: text}
			}
			if rv := def.PresentResult(oc.call, res); rv != nil {
				if rv.Content != nil {
					text = session.JoinText(rv.Content)
				}
				if rv.Diff != nil && live && !failed {
					diff = rv.Diff
				}
			}
		}
	}
	if known && oc.terminal && !strings.HasPrefix(text, "Error: ") {
		return terminalResult(id, status, clip(text, maxShownText), oc.streamed)
	}
	u := sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Status: &status}
	switch {
	case known && oc.clientTerminal != "" && !strings.HasPrefix(text, "Error: "):
		// The client keeps showing the released terminal's output; how
		// the command ended follows it unless it simply succeeded.
		u.Content = []sdk.ToolCallContent{sdk.ToolTerminalRef(oc.clientTerminal)}
		if end := strings.Join(markerRE.FindAllString(text, -1), "\n"); end != "" && end != "[exit code: 0]" {
			u.Content = append(u.Content, sdk.ToolContent(sdk.TextBlock(end)))
		}
	case diff != nil:
		u.Content = []sdk.ToolCallContent{shownDiff(diff)}
	case text != "":
		text = clip(text, maxShownText)
		// Command output reads best verbatim; the pipeline's own errors
		// (denials, aborts) are prose.
		if kind == tools.KindExecute && !strings.HasPrefix(text, "Error: ") {
			text = fence(text, "console")
		}
		u.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}
	}
	return []sdk.SessionUpdate{{ToolCallUpdate: &u}}
}

// forget drops an open call; the caller holds t.mu.
func (t *translator) forget(id string) {
	if _, ok := t.open[id]; !ok {
		return
	}
	delete(t.open, id)
	for i, x := range t.ids {
		if x == id {
			t.ids = append(t.ids[:i:i], t.ids[i+1:]...)
			break
		}
	}
}

// failOpen marks every call still without a result as failed, in start
// order, so a cancelled prompt never leaves a spinner behind.
func (t *translator) failOpen(reason string) []sdk.SessionUpdate {
	t.mu.Lock()
	ids := t.ids
	t.ids, t.open = nil, map[string]openCall{}
	t.mu.Unlock()
	out := make([]sdk.SessionUpdate, 0, len(ids))
	for _, id := range ids {
		out = append(out, sdk.UpdateToolCall(sdk.ToolCallId(id),
			sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(reason))})))
	}
	return out
}

// presentFor is present, with the logged diff (what the call says it
// changes) in place of a preview read from disk when buffers says the
// client holds the file's text.
func presentFor(reg *tools.Registry, call *tools.Call, buffers func(path string) bool) *tools.CallView {
	v := present(reg, call)
	if buffers == nil {
		return v
	}
	if def, ok := reg.For(call); ok && def.LoggedDiff != nil {
		if d := def.LoggedDiff(call); d != nil && buffers(d.Path) {
			v.Diff = d
		}
	}
	return v
}

// present is the tool's card for call, or a generic one for a tool that has
// none (or is unknown).
func present(reg *tools.Registry, call *tools.Call) *tools.CallView {
	if def, ok := reg.For(call); ok && def.PresentCall != nil {
		if v := def.PresentCall(call); v != nil {
			if v.Kind == "" {
				v.Kind = tools.KindOther
			}
			if v.Title == "" {
				v.Title = call.Name
			}
			return v
		}
	}
	var input any
	if json.Unmarshal(call.Args, &input) != nil {
		input = call.Arguments
	}
	return &tools.CallView{Kind: tools.KindOther, Title: call.Name, RawInput: input}
}

func locations(ls []tools.FileLocation) []sdk.ToolCallLocation {
	if len(ls) == 0 {
		return nil
	}
	out := make([]sdk.ToolCallLocation, len(ls))
	for i, l := range ls {
		out[i] = sdk.ToolCallLocation{Path: l.Path}
		if l.Line > 0 {
			out[i].Line = sdk.Ptr(l.Line)
		}
	}
	return out
}

func diffContent(d *tools.Diff) sdk.ToolCallContent {
	return sdk.ToolCallContent{Diff: &sdk.ToolCallContentDiff{Type: "diff", Path: d.Path, OldText: d.OldText, NewText: d.NewText}}
}

// fence wraps text in a Markdown code fence longer than any backtick run
// inside it, so output can never close the fence early.
func fence(text, lang string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + lang + "\n" + strings.TrimSuffix(text, "\n") + "\n" + f
}

// planUpdate maps todo_write's list onto an ACP plan (the whole list each
// time; the client replaces its plan).
func planUpdate(e session.Event) []sdk.SessionUpdate {
	var d session.TodoWrite
	if e.DecodeData(&d) != nil {
		return nil
	}
	entries := make([]sdk.PlanEntry, 0, len(d.Todos))
	for _, td := range d.Todos {
		status := sdk.PlanEntryStatusPending
		switch td.Status {
		case session.TodoInProgress:
			status = sdk.PlanEntryStatusInProgress
		case session.TodoCompleted:
			status = sdk.PlanEntryStatusCompleted
		}
		entries = append(entries, sdk.PlanEntry{Content: td.Content, Priority: sdk.PlanEntryPriorityMedium, Status: status})
	}
	return []sdk.SessionUpdate{sdk.UpdatePlan(entries...)}
}

func titleUpdate(e session.Event) []sdk.SessionUpdate {
	var d session.SessionTitle
	if e.DecodeData(&d) != nil || d.Title == "" {
		return nil
	}
	return []sdk.SessionUpdate{{SessionInfoUpdate: &sdk.SessionSessionInfoUpdate{
		Title:     sdk.Ptr(d.Title),
		UpdatedAt: sdk.Ptr(isoTime(e.Time)),
	}}}
}

// retryNotice is the short bracketed line shown when a model call is
// retried.
func retryNotice(d session.LLMRetry) string {
	delay := time.Duration(d.DelayMs) * time.Millisecond
	attempt := fmt.Sprintf("retry %d", d.Retry)
	if d.MaxRetries > 0 {
		attempt = fmt.Sprintf("retry %d of %d", d.Retry, d.MaxRetries)
	}
	return fmt.Sprintf("[model request failed: %s; %s in %s]\n\n", strings.TrimSpace(d.Failure.Message), attempt, delay)
}

// isoTime renders Unix milliseconds as ISO 8601 in UTC.
func isoTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
