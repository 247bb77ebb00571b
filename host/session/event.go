package session

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Event types written by the host. The set is open: plugins may add types,
// and unknown types are carried through untouched.
const (
	TypeUserMessage      = "user/message"
	TypeAssistantMessage = "assistant/message"
	TypeToolResult       = "tool/result"

	TypeTurnStart      = "turn/start"
	TypeTurnEnd        = "turn/end"
	TypeStepStart      = "step/start"
	TypeStepEnd        = "step/end"
	TypeRequestHeader  = "request/header"
	TypeRequestContext = "request/context"
	TypeAssistantChunk = "assistant/chunk"
	TypeToolCall       = "tool/call"
	TypeSessionTitle   = "session/title"
	TypeTodoWrite      = "todo/write"
	TypeEndSeed        = "session/end-seed"
	TypeLLMRetry       = "llm/retry"
	TypeLLMRetryStart  = "llm/retry-started"

	TypeCompactionStart   = "compaction/start"
	TypeCompactionSummary = "compaction/summary"
	TypeCompactionEnd     = "compaction/end"
)

// IsSurfaceType reports whether events of type t are surface nodes, the only
// events that may carry surfaceOp and sourceEventSeqs.
func IsSurfaceType(t string) bool {
	return t == TypeUserMessage || t == TypeAssistantMessage || t == TypeToolResult
}

// Event is the envelope of every log entry. Its JSON key order is type, seq,
// time, data, sourceEventSeqs, surfaceOp, ignorable.
//
// SourceEventSeqs and SurfaceOp are kept as the raw JSON that was stored so
// that the surface fold can report malformed values (a non-array source list,
// an unknown operation) instead of losing them at decode time. Build them with
// Sources, OpAppend and OpReplace; read them with Event.Sources and Event.Op.
type Event struct {
	Type            string          `json:"type"`
	Seq             int             `json:"seq"`
	Time            int64           `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs json.RawMessage `json:"sourceEventSeqs,omitempty"`
	SurfaceOp       json.RawMessage `json:"surfaceOp,omitempty"`
	Ignorable       *bool           `json:"ignorable,omitempty"`
}

// Clone returns a deep copy of e; the copy shares no bytes with e.
func (e Event) Clone() Event {
	c := e
	c.Data = cloneRaw(e.Data)
	c.SourceEventSeqs = cloneRaw(e.SourceEventSeqs)
	c.SurfaceOp = cloneRaw(e.SurfaceOp)
	c.Ignorable = clonePtr(e.Ignorable)
	return c
}

// CloneEvents deep-copies a slice of events.
func CloneEvents(events []Event) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		out[i] = e.Clone()
	}
	return out
}

// MarshalLine encodes e as one compact JSON line without a trailing newline.
func (e Event) MarshalLine() ([]byte, error) {
	if len(e.Data) == 0 {
		e.Data = json.RawMessage("{}")
	}
	return Marshal(e)
}

// DecodeData unmarshals the payload into v.
func (e Event) DecodeData(v any) error {
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("event %d (%s): decode data: %w", e.Seq, e.Type, err)
	}
	return nil
}

// HasSources reports whether sourceEventSeqs is present.
func (e Event) HasSources() bool { return len(e.SourceEventSeqs) > 0 }

// Sources decodes sourceEventSeqs. It returns nil, nil when absent and an
// error when the stored value is not an array of integers.
func (e Event) Sources() ([]int, error) {
	if len(e.SourceEventSeqs) == 0 {
		return nil, nil
	}
	var seqs []int
	if err := json.Unmarshal(e.SourceEventSeqs, &seqs); err != nil {
		return nil, fmt.Errorf("sourceEventSeqs must be an array of integers")
	}
	if seqs == nil {
		seqs = []int{}
	}
	return seqs, nil
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return bytes.Clone(r)
}

// Sources encodes a source list for a new surface event.
func Sources(seqs ...int) json.RawMessage {
	if seqs == nil {
		seqs = []int{}
	}
	return MustMarshal(seqs)
}

// SurfaceOp is the decoded form of an event's surfaceOp: either an append or a
// positional replacement of the nodes from Start through End.
type SurfaceOp struct {
	Replace bool
	Start   int
	End     int
}

// OpAppend is the raw surfaceOp of an appended surface node.
var OpAppend = json.RawMessage(`"append"`)

// OpReplace encodes a replacement of the surface nodes start..end.
func OpReplace(start, end int) json.RawMessage {
	return MustMarshal(struct {
		Op    string `json:"op"`
		Start int    `json:"start"`
		End   int    `json:"end"`
	}{"replace", start, end})
}
