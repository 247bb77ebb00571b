package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/stream"
)

// Packed chunk rows (host.md §2.8) are a storage encoding of a run of
// assistant/chunk deltas. Readers must expand them; this store never writes
// them.
const (
	packedText      = "text-chunks"
	packedReasoning = "reasoning-chunks"
	packedToolCall  = "tool-call-chunks"
)

// envelope captures every key a line may carry as raw JSON so that each one
// can be checked for presence and type separately.
type envelope struct {
	Type            json.RawMessage `json:"type"`
	Seq             json.RawMessage `json:"seq"`
	Time            json.RawMessage `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs json.RawMessage `json:"sourceEventSeqs"`
	SurfaceOp       json.RawMessage `json:"surfaceOp"`
	Ignorable       json.RawMessage `json:"ignorable"`
	Seq0            json.RawMessage `json:"seq0"`
	Time0           json.RawMessage `json:"time0"`
	DeltaRefs       json.RawMessage `json:"deltaRefs"` // see deltas.go
}

// decodeLine decodes one complete event line (without its newline) whose
// first event must carry seq next. A packed row yields several events. A
// line with deltaRefs needs the events before it: use appendLine.
func decodeLine(line []byte, next int) ([]session.Event, error) {
	return appendLine(nil, line, next)
}

// appendLine is decodeLine appending to dst, which holds the log's events
// just before the line (the last len(dst) of them: a line's deltaRefs are
// restored from them, see restoreDeltas), so that
// reading a whole log does not allocate a slice per line. Ordinary event
// lines take the one-pass scanner; anything it does not vouch for (packed
// rows, deltaRefs, errors, odd keys) takes the encoding/json path, which
// decides.
func appendLine(dst []session.Event, line []byte, next int) ([]session.Event, error) {
	if e, ok := scanLine(line, next); ok {
		return append(dst, e), nil
	}
	return appendLineJSON(dst, line, next)
}

// appendLineJSON is the reference decoder: every rule and error message of
// the line format lives here.
func appendLineJSON(dst []session.Event, line []byte, next int) ([]session.Event, error) {
	if !isObject(line) {
		return dst, errors.New("line is not a JSON object")
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return dst, fmt.Errorf("invalid JSON: %w", err)
	}
	var typ string
	if len(env.Type) == 0 {
		return dst, errors.New("missing type")
	}
	if isNull(env.Type) || json.Unmarshal(env.Type, &typ) != nil {
		return dst, errors.New("type must be a string")
	}
	if typ == "" {
		return dst, errors.New("type is empty")
	}
	switch typ {
	case packedText, packedReasoning, packedToolCall:
		if len(env.DeltaRefs) > 0 {
			return dst, fmt.Errorf("%s row: a packed row cannot carry deltaRefs", typ)
		}
		return appendPacked(dst, typ, env, next)
	}
	seq, err := intField("seq", env.Seq)
	if err != nil {
		return dst, err
	}
	if seq != int64(next) {
		return dst, fmt.Errorf("seq %d out of order (expected %d)", seq, next)
	}
	t, err := intField("time", env.Time)
	if err != nil {
		return dst, err
	}
	if len(env.Data) == 0 {
		return dst, errors.New("missing data")
	}
	e := session.Event{
		Type:            typ,
		Seq:             next,
		Time:            t,
		Data:            env.Data,
		SourceEventSeqs: env.SourceEventSeqs,
		SurfaceOp:       env.SurfaceOp,
	}
	if len(env.Ignorable) > 0 {
		if err := json.Unmarshal(env.Ignorable, &e.Ignorable); err != nil {
			return dst, errors.New("ignorable must be a boolean")
		}
	}
	if len(env.DeltaRefs) > 0 && !isNull(env.DeltaRefs) {
		if e.Data, err = restoreDeltas(dst, next-len(dst), e, env.DeltaRefs); err != nil {
			return dst, err
		}
	}
	return append(dst, e), nil
}

type packedData struct {
	Turn  *int     `json:"turn"`
	Step  *int     `json:"step"`
	Index *int     `json:"index"`
	DT    []int64  `json:"dt"`
	Texts []string `json:"texts"`
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Args  []string `json:"args"`
}

// appendPacked expands a packed row: member i has seq seq0+i and time
// time0 + dt[0] + ... + dt[i-1].
func appendPacked(dst []session.Event, typ string, env envelope, next int) ([]session.Event, error) {
	seq0, err := intField("seq0", env.Seq0)
	if err != nil {
		return dst, fmt.Errorf("%s row: %w", typ, err)
	}
	if seq0 != int64(next) {
		return dst, fmt.Errorf("%s row: seq0 %d out of order (expected %d)", typ, seq0, next)
	}
	t, err := intField("time0", env.Time0)
	if err != nil {
		return dst, fmt.Errorf("%s row: %w", typ, err)
	}
	var d packedData
	if len(env.Data) == 0 || !isObject(env.Data) {
		return dst, fmt.Errorf("%s row: data must be an object", typ)
	}
	if err := json.Unmarshal(env.Data, &d); err != nil {
		return dst, fmt.Errorf("%s row: invalid data: %w", typ, err)
	}
	if d.Turn == nil || d.Step == nil || d.Index == nil {
		return dst, fmt.Errorf("%s row: data needs turn, step and index", typ)
	}
	members, field := d.Texts, "texts"
	if typ == packedToolCall {
		members, field = d.Args, "args"
	}
	if len(members) == 0 {
		return dst, fmt.Errorf("%s row: %s must be a non-empty array of strings", typ, field)
	}
	if len(d.DT) != len(members)-1 {
		return dst, fmt.Errorf("%s row: dt has %d entries for %d members (want one fewer)", typ, len(d.DT), len(members))
	}
	for i, m := range members {
		if i > 0 {
			t += d.DT[i-1]
		}
		c := stream.Chunk{Index: *d.Index}
		switch typ {
		case packedText:
			c.Type, c.Delta = stream.ChunkTextDelta, m
		case packedReasoning:
			c.Type, c.Delta = stream.ChunkReasoningDelta, m
		default:
			c.Type, c.ID, c.Name, c.ArgumentsDelta = stream.ChunkToolCallDelta, d.ID, d.Name, m
		}
		chunk, err := c.MarshalJSON()
		if err != nil {
			return dst, fmt.Errorf("%s row: %w", typ, err)
		}
		dst = append(dst, session.Event{Type: session.TypeAssistantChunk, Seq: next + i, Time: t, Data: chunkData(*d.Turn, *d.Step, chunk)})
	}
	return dst, nil
}

// chunkData is session.Marshal(session.AssistantChunk{turn, step, chunk})
// for a chunk that is already compact encoder output, written directly:
// marshalling the struct would only validate and copy the chunk again.
func chunkData(turn, step int, chunk []byte) json.RawMessage {
	data := make([]byte, 0, len(`{"turn":,"step":,"chunk":}`)+40+len(chunk))
	data = append(data, `{"turn":`...)
	data = strconv.AppendInt(data, int64(turn), 10)
	data = append(data, `,"step":`...)
	data = strconv.AppendInt(data, int64(step), 10)
	data = append(data, `,"chunk":`...)
	data = append(data, chunk...)
	return append(data, '}')
}

// intField parses a present, non-null JSON integer (no fraction, no
// exponent).
func intField(name string, raw json.RawMessage) (int64, error) {
	if len(raw) == 0 {
		return 0, fmt.Errorf("missing %s", name)
	}
	var n int64
	if isNull(raw) || json.Unmarshal(raw, &n) != nil {
		return 0, fmt.Errorf("%s must be an integer", name)
	}
	return n, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(raw, []byte("null")) }
