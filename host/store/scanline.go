package store

import (
	"bytes"
	"encoding/json"

	"github.com/seed-e9b4dba4/dsh/host/jsonscan"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// lineSpans are the raw values of the envelope keys of one line, nil when
// absent. They alias the line.
type lineSpans struct {
	typ, seq, time, data, sources, surface, ignorable []byte
}

// envelopeKeys are the keys whose values scanLine reads. encoding/json
// matches keys case-insensitively and lets the last duplicate win, so a key
// that only folds to one of these, or repeats one, is left to it.
// deltaRefs is among them so that a line carrying it is left to
// appendLineJSON, which restores the strings it stands for.
var envelopeKeys = [...]string{"type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable", "deltaRefs"}

// scanLine decodes an ordinary (unpacked) event line in one validating pass
// over its bytes, copying the payloads once. ok is false for any line it
// does not vouch for; appendLineJSON then decides, so a line decodes the
// same either way.
func scanLine(line []byte, next int) (e session.Event, ok bool) {
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return e, false
	}
	var sp lineSpans
	end, ok := jsonscan.Object(line, i, func(key []byte, flags jsonscan.StrFlags, v int) (int, bool) {
		end, ok := jsonscan.Value(line, v)
		if !ok || !flags.Plain() {
			return end, false
		}
		slot := sp.slot(key)
		if slot == nil {
			return end, !foldsToEnvelopeKey(key)
		}
		if *slot != nil {
			return end, false
		}
		*slot = line[v:end]
		return end, true
	})
	if !ok || jsonscan.SkipSpace(line, end) != len(line) {
		return e, false
	}
	typ, ok := plainString(sp.typ)
	if !ok || len(typ) == 0 || isPacked(typ) || sp.data == nil {
		return e, false
	}
	seq, ok := jsonscan.Int(sp.seq)
	if !ok || seq != int64(next) {
		return e, false
	}
	if e.Time, ok = jsonscan.Int(sp.time); !ok {
		return e, false
	}
	switch string(sp.ignorable) {
	case "", "null":
	case "true", "false":
		b := sp.ignorable[0] == 't'
		e.Ignorable = &b
	default:
		return e, false
	}
	e.Type, e.Seq = eventType(typ), next
	// One allocation holds every payload; each slice is capped so that an
	// append to one never writes into the next.
	buf := make([]byte, 0, len(sp.data)+len(sp.sources)+len(sp.surface))
	carve := func(raw []byte) json.RawMessage {
		if raw == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, raw...)
		return buf[start:len(buf):len(buf)]
	}
	e.Data, e.SourceEventSeqs, e.SurfaceOp = carve(sp.data), carve(sp.sources), carve(sp.surface)
	return e, true
}

func (sp *lineSpans) slot(key []byte) *[]byte {
	switch string(key) {
	case "type":
		return &sp.typ
	case "seq":
		return &sp.seq
	case "time":
		return &sp.time
	case "data":
		return &sp.data
	case "sourceEventSeqs":
		return &sp.sources
	case "surfaceOp":
		return &sp.surface
	case "ignorable":
		return &sp.ignorable
	}
	return nil
}

func foldsToEnvelopeKey(key []byte) bool {
	for _, k := range envelopeKeys {
		if len(k) == len(key) && bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// plainString returns the contents of a string token that has no escapes
// and is ASCII, so that its bytes are its value.
func plainString(tok []byte) ([]byte, bool) {
	if len(tok) < 2 || tok[0] != '"' {
		return nil, false
	}
	s := tok[1 : len(tok)-1]
	for _, c := range s {
		if c == '\\' || c >= 0x80 {
			return nil, false
		}
	}
	return s, true
}

func isPacked(typ []byte) bool {
	switch string(typ) {
	case packedText, packedReasoning, packedToolCall:
		return true
	}
	return false
}

// eventType returns the vocabulary's own string for a known type, so that
// a log's million events do not each allocate their type.
func eventType(typ []byte) string {
	switch string(typ) {
	case session.TypeAssistantChunk:
		return session.TypeAssistantChunk
	case session.TypeAssistantMessage:
		return session.TypeAssistantMessage
	case session.TypeUserMessage:
		return session.TypeUserMessage
	case session.TypeToolCall:
		return session.TypeToolCall
	case session.TypeToolResult:
		return session.TypeToolResult
	case session.TypeStepStart:
		return session.TypeStepStart
	case session.TypeStepEnd:
		return session.TypeStepEnd
	case session.TypeTurnStart:
		return session.TypeTurnStart
	case session.TypeTurnEnd:
		return session.TypeTurnEnd
	case session.TypeRequestHeader:
		return session.TypeRequestHeader
	case session.TypeRequestContext:
		return session.TypeRequestContext
	case session.TypeTodoWrite:
		return session.TypeTodoWrite
	case session.TypeSessionTitle:
		return session.TypeSessionTitle
	}
	return string(typ)
}
