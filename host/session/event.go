package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
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
	TypeSettings       = "session/settings"

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
// error when the stored value is not an array of non-negative safe integers.
func (e Event) Sources() ([]int, error) {
	if len(e.SourceEventSeqs) == 0 {
		return nil, nil
	}
	seqs, why := decodeSeqList(e.SourceEventSeqs)
	switch why {
	case seqListNotArray:
		return nil, errors.New("sourceEventSeqs must be an array when present")
	case seqListBadEntry:
		return nil, errors.New("sourceEventSeqs must densely contain non-negative safe integers")
	}
	return seqs, nil
}

// HasSurfaceOp reports whether surfaceOp is present.
func (e Event) HasSurfaceOp() bool { return len(e.SurfaceOp) > 0 }

// Op decodes surfaceOp. It accepts exactly "append" or an object with
// exactly the keys op:"replace", start and end, both non-negative safe
// integers; anything else, including an absent surfaceOp, is an error.
func (e Event) Op() (SurfaceOp, error) {
	raw := bytes.TrimSpace(e.SurfaceOp)
	if len(raw) == 0 {
		return SurfaceOp{}, errors.New("surfaceOp is missing")
	}
	if bytes.Equal(raw, OpAppend) {
		return SurfaceOp{}, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil && s == "append" {
			return SurfaceOp{}, nil
		}
		return SurfaceOp{}, fmt.Errorf("surfaceOp %s is not \"append\" or a replace object", truncateForMessage(raw))
	case '{':
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return SurfaceOp{}, fmt.Errorf("surfaceOp is not valid JSON: %w", err)
		}
		var op string
		opRaw, hasOp := fields["op"]
		startRaw, hasStart := fields["start"]
		endRaw, hasEnd := fields["end"]
		if len(fields) != 3 || !hasOp || !hasStart || !hasEnd {
			return SurfaceOp{}, errors.New(`replace surfaceOp must have exactly the keys "op", "start" and "end"`)
		}
		if json.Unmarshal(opRaw, &op) != nil || op != "replace" {
			return SurfaceOp{}, fmt.Errorf(`surfaceOp op %s is not "replace"`, truncateForMessage(bytes.TrimSpace(opRaw)))
		}
		start, ok := parseSeq(startRaw)
		if !ok {
			return SurfaceOp{}, fmt.Errorf("replace surfaceOp start %s is not a non-negative safe integer", truncateForMessage(bytes.TrimSpace(startRaw)))
		}
		end, ok := parseSeq(endRaw)
		if !ok {
			return SurfaceOp{}, fmt.Errorf("replace surfaceOp end %s is not a non-negative safe integer", truncateForMessage(bytes.TrimSpace(endRaw)))
		}
		return SurfaceOp{Replace: true, Start: start, End: end}, nil
	default:
		return SurfaceOp{}, fmt.Errorf("surfaceOp %s is not \"append\" or a replace object", truncateForMessage(raw))
	}
}

// truncateForMessage keeps error messages short when a stored value is huge.
func truncateForMessage(raw []byte) string {
	const max = 64
	if len(raw) <= max {
		return string(raw)
	}
	n := max
	for n > 0 && !utf8.RuneStart(raw[n]) {
		n--
	}
	return string(raw[:n]) + "…"
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
