package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// stepKey identifies one model call of a turn.
type stepKey struct{ turn, step int }

// presenter returns the presentation function of a tool as a session sees
// it, or nil.
type presenter func(session, name string) func(*tools.Call) *tools.CallView

// transcript folds a session's events into entries and status facts. It is
// append-only: entries are never removed or reordered, only changed in
// place (a retracted stream is emptied and lays out to zero rows), so the
// view's scroll anchor, an entry index, stays valid while events arrive.
// It is used only on the UI goroutine.
type transcript struct {
	entries []*entry
	// next is the seq the next applied event must carry.
	next int

	header  session.Header
	title   string
	todos   []session.Todo
	prompts []string
	stats   stats

	present presenter
	cards   map[string]*entry
	// stream holds the live entries of the model call being streamed, by
	// chunk block index.
	stream     map[int]*entry
	streamStep stepKey
	compacting bool
}

func newTranscript(h session.Header, present presenter) *transcript {
	return &transcript{header: h, present: present, cards: map[string]*entry{}, stream: map[int]*entry{}}
}

// load folds a whole log. Chunks of finished model calls are skipped: the
// assistant/message that follows them carries the same content, and a
// failed attempt is reported by its retry or turn end. Only the chunks of a
// call still streaming at the end of the log are applied.
func (t *transcript) load(events []session.Event) {
	open := len(events)
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case session.TypeStepStart:
			open = i
		case session.TypeStepEnd, session.TypeTurnEnd, session.TypeAssistantMessage, session.TypeToolCall:
		default:
			continue
		}
		break
	}
	for i, e := range events {
		if e.Type == session.TypeAssistantChunk && i < open {
			t.next = e.Seq + 1
			continue
		}
		t.apply(e, false)
	}
}

// apply folds one event. live says it arrived while the session runs (its
// stream is shown, and the phase it implies is set); presentation captured
// for a live tool call comes separately through capture.
func (t *transcript) apply(e session.Event, live bool) {
	t.next = e.Seq + 1
	switch e.Type {
	case session.TypeUserMessage:
		t.userMessage(e)
	case session.TypeAssistantChunk:
		t.chunk(e, live)
	case session.TypeAssistantMessage:
		t.assistantMessage(e)
	case session.TypeToolCall:
		t.toolCall(e, live)
	case session.TypeToolResult:
		t.toolResult(e)
	case session.TypeTurnStart:
		var d session.TurnStart
		if e.DecodeData(&d) == nil {
			t.stats.turn, t.stats.step = d.Turn, 0
		}
		t.todos = nil
		if live {
			t.stats.setPhase(phaseWaiting, e.Time)
		}
	case session.TypeStepStart:
		var d session.StepBoundary
		if e.DecodeData(&d) == nil {
			t.stats.step = d.Step
		}
		if live {
			t.stats.setPhase(phaseWaiting, e.Time)
		}
	case session.TypeTurnEnd:
		t.turnEnd(e)
		t.stats.setPhase(phaseIdle, e.Time)
	case session.TypeSessionTitle:
		if title, err := session.FoldTitle([]session.Event{e}); err == nil && title != nil {
			t.title = title.Title
		}
	case session.TypeTodoWrite:
		var d session.TodoWrite
		if e.DecodeData(&d) == nil {
			t.todos = d.Todos
		}
	case session.TypeRequestHeader:
		var d session.RequestHeader
		if e.DecodeData(&d) == nil {
			t.stats.provider, t.stats.model = d.Header.Config.Provider, d.Header.Config.Model
			t.stats.effort = d.Header.Config.ReasoningEffort
		}
	case session.TypeRequestContext:
		var d session.RequestContext
		if e.DecodeData(&d) == nil {
			t.stats.provider, t.stats.model = d.Provider, d.Model
			if d.ContextWindow > 0 {
				t.stats.window = d.ContextWindow
			}
		}
	case session.TypeLLMRetry:
		t.retry(e)
	case session.TypeCompactionStart:
		t.compacting = true
		if live {
			t.stats.setPhase(phaseCompacting, e.Time)
		}
	case session.TypeCompactionSummary:
		var d agent.CompactionSummary
		if e.DecodeData(&d) == nil && d.Usage != nil {
			t.stats.addUsage(*d.Usage, false)
		}
	case session.TypeCompactionEnd:
		t.compacting = false
		var d agent.CompactionEnd
		switch {
		case e.DecodeData(&d) != nil || d.Error == "":
		case strings.HasPrefix(d.Error, "cancelled ("+agent.CauseUser+")"):
			// The agent's text for a user's cancellation.
			t.add(entryNotice, e.Seq, "compaction cancelled, history left unchanged")
		default:
			t.add(entryError, e.Seq, "compaction failed, history left unchanged: "+d.Error)
		}
		if live && t.stats.phase == phaseCompacting {
			next := phaseIdle
			if d.Turn != nil {
				next = phaseWaiting
			}
			t.stats.setPhase(next, e.Time)
		}
	case session.TypeEndSeed:
		h := t.header
		if h.ParentSession != nil && h.SeedLength != nil && e.Seq == *h.SeedLength {
			t.add(entryMarker, e.Seq, "forked from session "+shortID(*h.ParentSession))
		} else if e.Seq > 0 {
			t.add(entryMarker, e.Seq, "session resumed")
		}
	}
}

func (t *transcript) add(kind entryKind, seq int, text string) *entry {
	e := &entry{kind: kind, seq: seq, text: text}
	t.entries = append(t.entries, e)
	return e
}

// notice appends a local remark that comes from no event.
func (t *transcript) notice(kind entryKind, text string) { t.add(kind, -1, text) }

func (t *transcript) userMessage(e session.Event) {
	var d session.Message
	if e.DecodeData(&d) != nil {
		return
	}
	text := messageText(d.Content)
	var src struct {
		Kind   string `json:"kind"`
		Plugin string `json:"plugin"`
		Form   string `json:"form"`
	}
	_ = json.Unmarshal(d.Source, &src)
	switch {
	case src.Kind == session.SourceUser:
		t.add(entryUser, e.Seq, text)
		t.prompts = append(t.prompts, text)
	case src.Plugin == agent.CompactionPlugin:
		t.add(entryMarker, e.Seq, "earlier context was compacted")
	case src.Plugin == prompt.PluginName:
		// The runtime context (cwd, mode, date) is for the model only.
	case src.Kind == session.SourceInstructions:
		t.add(entryNotice, e.Seq, fmt.Sprintf("project instructions loaded (%d lines)", len(splitLines(text))))
	default:
		first := strings.TrimSpace(splitLines(text)[0])
		t.add(entryNotice, e.Seq, "context added: "+first)
	}
}

// messageText joins a message's text blocks; other blocks show as a tag.
func messageText(blocks []session.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case session.BlockText:
			parts = append(parts, b.Text)
		case session.BlockImage:
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

func (t *transcript) chunk(e session.Event, live bool) {
	if t.compacting {
		return
	}
	var d session.AssistantChunk
	if e.DecodeData(&d) != nil {
		return
	}
	var c llm.Chunk
	if json.Unmarshal(d.Chunk, &c) != nil {
		return
	}
	key := stepKey{d.Turn, d.Step}
	if key != t.streamStep {
		t.stream = map[int]*entry{}
		t.streamStep = key
	}
	streamEntry := func(kind entryKind) *entry {
		s := t.stream[c.Index]
		if s == nil {
			s = t.add(kind, e.Seq, "")
			s.streaming, s.step = true, key
			t.stream[c.Index] = s
		}
		return s
	}
	switch c.Type {
	case llm.ChunkBlockStart:
		switch c.BlockType {
		case session.BlockReasoning:
			streamEntry(entryReasoning)
		case session.BlockText:
			streamEntry(entryAssistant)
		}
	case llm.ChunkReasoningDelta:
		s := streamEntry(entryReasoning)
		s.text += c.Delta
		s.touch()
		if live {
			t.stats.setPhase(phaseThinking, e.Time)
		}
	case llm.ChunkTextDelta:
		s := streamEntry(entryAssistant)
		s.text += c.Delta
		s.touch()
		if live {
			t.stats.setPhase(phaseResponding, e.Time)
		}
	case llm.ChunkToolCallDelta:
		if live {
			t.stats.setPhase(phaseResponding, e.Time)
		}
	}
}

// retract empties the live entries of the streamed call.
func (t *transcript) retract() {
	for _, s := range t.stream {
		if s.streaming {
			s.text, s.streaming = "", false
			s.touch()
		}
	}
	t.stream = map[int]*entry{}
}

func (t *transcript) assistantMessage(e session.Event) {
	var d session.AssistantMessage
	if e.DecodeData(&d) != nil {
		return
	}
	if t.compacting {
		return
	}
	// Reuse the streamed entries in order, so the text does not jump.
	var reuse []*entry
	if (stepKey{d.Turn, d.Step}) == t.streamStep {
		for i := 0; i < len(t.entries); i++ {
			if s := t.entries[i]; s.streaming && s.step == t.streamStep {
				reuse = append(reuse, s)
			}
		}
	}
	take := func(kind entryKind) *entry {
		for i, s := range reuse {
			if s != nil && s.kind == kind {
				reuse[i] = nil
				return s
			}
		}
		return t.add(kind, e.Seq, "")
	}
	for _, b := range d.Message.Content {
		var kind entryKind
		switch b.Type {
		case session.BlockReasoning:
			kind = entryReasoning
		case session.BlockText:
			kind = entryAssistant
		default:
			continue
		}
		if strings.TrimSpace(b.Text) == "" {
			continue
		}
		s := take(kind)
		s.text, s.streaming, s.seq = b.Text, false, e.Seq
		s.touch()
	}
	for _, s := range reuse {
		if s != nil {
			s.text, s.streaming = "", false
			s.touch()
		}
	}
	t.stream = map[int]*entry{}
	if d.Usage != nil {
		t.stats.addUsage(*d.Usage, true)
	}
	if d.Interrupted {
		t.add(entryNotice, e.Seq, "reply interrupted")
	}
}

func (t *transcript) toolCall(e session.Event, live bool) {
	var d session.ToolCall
	if e.DecodeData(&d) != nil {
		return
	}
	card := &toolCard{callID: d.CallID, name: d.Name, args: d.Arguments, started: e.Time}
	card.call = &tools.Call{
		CallID:    d.CallID,
		Name:      d.Name,
		Arguments: d.Arguments,
		Args:      tools.ParseArguments(d.Arguments),
		Location:  tools.Location{Turn: d.Turn, Step: d.Step},
		Cwd:       t.header.CwdOrEmpty(),
	}
	if t.present != nil {
		card.present = t.present(t.header.ID, d.Name)
	}
	ent := t.add(entryTool, e.Seq, "")
	ent.tool = card
	t.cards[d.CallID] = ent
	if live {
		t.stats.toolsRunning++
		t.stats.setPhase(phaseTools, e.Time)
	}
}

// capture attaches a tool call's presentation taken before it ran.
func (t *transcript) capture(callID string, v *tools.CallView) {
	ent := t.cards[callID]
	if ent == nil || v == nil {
		return
	}
	ent.tool.view, ent.tool.viewLive, ent.tool.resolved = v, true, true
	ent.touch()
}

func (t *transcript) toolResult(e session.Event) {
	var d session.ToolResult
	if e.DecodeData(&d) != nil {
		return
	}
	callID := ""
	for _, b := range d.Message.Content {
		if b.Type == session.BlockToolResult {
			callID = b.ToolCallID
			break
		}
	}
	ent := t.cards[callID]
	if ent == nil {
		// A result without its call (a seeded fork boundary): show it alone.
		ent = t.add(entryTool, e.Seq, "")
		ent.tool = &toolCard{callID: callID, name: "tool", started: e.Time}
		t.cards[callID] = ent
	}
	if ent.tool.status == cardRunning && t.stats.toolsRunning > 0 {
		t.stats.toolsRunning--
	}
	ent.tool.finish(d, e.Time)
	ent.touch()
	if ent.tool.asking {
		ent.tool.asking = false
		t.stats.asking--
	}
	if t.stats.toolsRunning == 0 && (t.stats.phase == phaseTools || t.stats.phase == phaseApproval && t.stats.asking == 0) {
		t.stats.setPhase(phaseWaiting, e.Time)
	}
}

func (t *transcript) turnEnd(e session.Event) {
	var d session.TurnEnd
	if e.DecodeData(&d) != nil {
		return
	}
	t.retract()
	t.stats.toolsRunning, t.stats.asking = 0, 0
	r := d.Reason
	switch r.Kind {
	case session.EndAborted:
		why := "turn cancelled"
		if r.Reason != nil && r.Reason.Kind == agent.CauseDisposed {
			why = "turn stopped: the session was closed"
		}
		t.add(entryNotice, e.Seq, why)
	case session.EndError:
		if r.Error != nil && r.Error.Code == llm.CodeScriptOver {
			// The demo's normal end, not a failure.
			t.add(entryNotice, e.Seq, r.Error.Message)
			break
		}
		msg := "the turn failed"
		if r.Error != nil {
			msg = failureText(*r.Error)
		}
		t.add(entryError, e.Seq, msg)
	case session.EndMaxTokens:
		t.add(entryNotice, e.Seq, "the reply hit the output token limit; send a message to continue")
	case session.EndInterrupted:
		t.add(entryNotice, e.Seq, "turn interrupted (dsh stopped before it ended)")
	case session.EndBlocked:
		t.add(entryNotice, e.Seq, "turn blocked by a policy")
	}
}

// failureText says what failed and, where the fix is known, what to do.
func failureText(f session.Failure) string {
	msg := fmt.Sprintf("model error: %s (%s)", f.Message, f.Code)
	switch f.Code {
	case llm.CodeMissingCredential:
		msg += "\nSet the API key (export DEEPSEEK_API_KEY=…, or llm.api_key_env) and send your message again."
	case llm.CodeInvalidCredential, llm.CodeAuth:
		msg += "\nCheck the API key, then /retry."
	case llm.CodeRateLimit, llm.CodeQuota, llm.CodeServer, llm.CodeTransport, llm.CodeTimeout, llm.CodeStreamClosed:
		msg += "\n/retry sends the conversation again (your message is not repeated)."
	case llm.CodeContextExceeded:
		msg += "\nRun /compact to shrink the conversation, then /retry."
	}
	return msg
}

func (t *transcript) retry(e session.Event) {
	var d session.LLMRetry
	if e.DecodeData(&d) != nil {
		return
	}
	t.retract()
	attempt := fmt.Sprintf("retry %d", d.Retry)
	if d.MaxRetries > 0 {
		attempt += fmt.Sprintf(" of %d", d.MaxRetries)
	}
	t.add(entryNotice, e.Seq, fmt.Sprintf("%s (%s) · %s in %s", d.Failure.Message, d.Failure.Code, attempt, formatDuration(msDuration(d.DelayMs))))
}

// entryAt returns the index of the entry holding the event at seq: the
// last entry made from an event at or before it.
func (t *transcript) entryAt(seq int) int {
	at := 0
	for i, e := range t.entries {
		if e.seq > seq {
			break
		}
		if e.seq >= 0 {
			at = i
		}
	}
	return at
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
