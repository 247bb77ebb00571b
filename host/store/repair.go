package store

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Texts of the synthetic tool results written by crash repair.
const (
	outcomeUnknownText = "Error: tool outcome unknown (the session ended unexpectedly)"
	outcomeUnknownName = "ToolInterruptedError"
	outcomeUnknownCode = "TOOL_OUTCOME_UNKNOWN"
)

// repair makes a freshly read log safe to continue: it truncates a torn tail
// and appends closers for an open last turn, then fsyncs and journals. It
// returns the events including the closers. A clean log is left untouched.
func (w *Writer) repair(d logData) ([]session.Event, error) {
	closers := closeOpenTurn(w.id, d.events)
	if d.torn > 0 || len(closers) > 0 {
		// Announced before the log changes, so a reader watches it even
		// if this process dies half-way through the repair.
		w.s.recordChange(w.id, w.path, d.complete)
	}
	if d.torn > 0 {
		w.s.log.Warn("truncating an incomplete last line left by a crash",
			"path", w.path, "bytes", d.torn, "offset", d.complete)
		if err := w.f.Truncate(d.complete); err != nil {
			return nil, fmt.Errorf("repair session log %s: truncate torn tail: %w", w.path, err)
		}
		w.dirty = true
	}
	if len(closers) > 0 {
		w.s.log.Warn("closing a turn interrupted by a crash", "path", w.path,
			"session", w.id, "events", len(closers))
		if err := w.Append(closers...); err != nil {
			return nil, fmt.Errorf("repair session log %s: %w", w.path, err)
		}
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("repair session log %s: %w", w.path, err)
	}
	return append(d.events, closers...), nil
}

// closeOpenTurn returns the events that close the last turn when it has a
// turn/start but no turn/end: for a model stream cut off mid-answer, its
// finish and the streamed text and reasoning as an interrupted
// assistant/message (what the user saw stays in the conversation, as when a
// turn is cancelled); a tool/result for every unanswered tool/call (outcome
// unknown: the tool may or may not have run), a step/end when a step is
// open, and turn/end interrupted. All carry the last event's time.
func closeOpenTurn(sessionID string, events []session.Event) []session.Event {
	start := -1
scan:
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case session.TypeTurnEnd:
			return nil
		case session.TypeTurnStart:
			start = i
			break scan
		}
	}
	if start < 0 {
		return nil
	}
	turn := turnNumber(events, start)

	type call struct {
		seq        int
		turn, step int
		id         string
	}
	var calls []call
	answered := map[string]bool{}
	var step *session.StepBoundary
	var stream cutStream
	for _, e := range events[start+1:] {
		stream.observe(e)
		switch e.Type {
		case session.TypeToolCall:
			var c session.ToolCall
			if json.Unmarshal(e.Data, &c) == nil && c.CallID != "" {
				calls = append(calls, call{e.Seq, c.Turn, c.Step, c.CallID})
			}
		case session.TypeToolResult:
			for _, id := range answeredCallIDs(e.Data) {
				answered[id] = true
			}
		case session.TypeStepStart:
			var b session.StepBoundary
			if json.Unmarshal(e.Data, &b) != nil {
				b = session.StepBoundary{Turn: turn}
			}
			step = &b
		case session.TypeStepEnd:
			step = nil
		}
	}

	last := events[len(events)-1].Time
	var out []session.Event
	add := func(typ string, data any, opts ...func(*session.Event)) {
		e := session.Event{Type: typ, Seq: len(events) + len(out), Time: last, Data: session.MustMarshal(data)}
		for _, o := range opts {
			o(&e)
		}
		out = append(out, e)
	}
	if stream.open() {
		finish := stream.finishChunk()
		add(session.TypeAssistantChunk, finish)
		stream.seqs = append(stream.seqs, len(events)+len(out)-1)
		if msg, ok := stream.message(sessionID); ok {
			add(session.TypeAssistantMessage, msg, func(e *session.Event) {
				e.SourceEventSeqs = session.Sources(stream.seqs...)
				e.SurfaceOp = session.OpAppend
			})
		}
	}
	for _, c := range calls {
		if answered[c.id] {
			continue
		}
		answered[c.id] = true
		msg := session.Message{
			Role: session.RoleUser,
			Content: []session.ContentBlock{session.ToolResultBlock(c.id,
				[]session.ContentBlock{session.TextBlock(outcomeUnknownText)}, true)},
			Source: session.ToolSource(c.id),
			ID:     recoveredMessageID(sessionID, c.id),
		}
		add(session.TypeToolResult, session.ToolResult{
			Turn: c.turn, Step: c.step, Message: msg,
			Error: &session.ToolErrorInfo{Name: outcomeUnknownName, Code: outcomeUnknownCode},
		}, func(e *session.Event) {
			e.SourceEventSeqs = session.Sources(c.seq)
			e.SurfaceOp = session.OpAppend
		})
	}
	if step != nil {
		add(session.TypeStepEnd, *step)
	}
	add(session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.EndInterrupted}})
	return out
}

// turnNumber reads the turn of the turn/start at index i, falling back to
// its ordinal when the payload is unreadable.
func turnNumber(events []session.Event, i int) int {
	var ts session.TurnStart
	if json.Unmarshal(events[i].Data, &ts) == nil && ts.Turn > 0 {
		return ts.Turn
	}
	n := 0
	for _, e := range events[:i+1] {
		if e.Type == session.TypeTurnStart {
			n++
		}
	}
	return n
}

// answeredCallIDs returns the call ids a tool/result payload answers, from
// its tool-result blocks and its {kind:"tool", callId} source.
func answeredCallIDs(data json.RawMessage) []string {
	var r struct {
		Message struct {
			Content []struct {
				Type       string `json:"type"`
				ToolCallID string `json:"toolCallId"`
			} `json:"content"`
			Source struct {
				CallID string `json:"callId"`
			} `json:"source"`
		} `json:"message"`
	}
	if json.Unmarshal(data, &r) != nil {
		return nil
	}
	var ids []string
	if r.Message.Source.CallID != "" {
		ids = append(ids, r.Message.Source.CallID)
	}
	for _, b := range r.Message.Content {
		if b.Type == session.BlockToolResult && b.ToolCallID != "" {
			ids = append(ids, b.ToolCallID)
		}
	}
	return ids
}

// recoveredMessageID derives a stable UUID for a synthetic result, so
// repairing the same log twice (say on two machines) yields the same bytes.
func recoveredMessageID(sessionID, callID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("dsh:recovered-tool-result:"+sessionID+":"+callID)).String()
}
