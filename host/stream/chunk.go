package stream

import (
	"encoding/json"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Chunk types.
const (
	ChunkBlockStart     = "block-start"
	ChunkTextDelta      = "text-delta"
	ChunkReasoningDelta = "reasoning-delta"
	ChunkToolCallDelta  = "tool-call-delta"
	ChunkBlockEnd       = "block-end"
	ChunkUsage          = "usage"
	ChunkFinish         = "finish"
)

// Finish kinds.
const (
	FinishStop      = "stop"
	FinishToolCalls = "tool-calls"
	FinishMaxTokens = "max-tokens"
	FinishError     = "error"
	FinishAborted   = "aborted"
)

// CodeAborted is the failure code of an aborted finish: the stream was
// cancelled before the model ended it.
const CodeAborted = "ABORTED"

// Chunk is one element of a model stream. Its JSON form (the "chunk" of an
// assistant/chunk event) carries only the fields of its type:
//
//	{"type":"block-start","index":0,"blockType":"reasoning"}
//	{"type":"text-delta","index":1,"delta":"Hi"}
//	{"type":"reasoning-delta","index":0,"delta":"..."}
//	{"type":"tool-call-delta","index":2,"id":"call_1","name":"read","argumentsDelta":"{\"fi"}
//	{"type":"block-end","index":1,"block":{"type":"text","text":"Hi"}}
//	{"type":"usage","usage":{"inputTokens":10,"outputTokens":2}}
//	{"type":"finish","kind":"stop"}
//	{"type":"finish","kind":"error","failure":{"message":"...","code":"SERVER","status":500}}
//
// A well-formed stream ends with exactly one finish; usage precedes it.
type Chunk struct {
	Type           string
	Index          int
	BlockType      string
	Delta          string
	ID             string
	Name           string
	ArgumentsDelta string
	Block          *session.ContentBlock
	Usage          *session.Usage
	Kind           string
	Failure        *session.Failure
}

// MarshalJSON implements json.Marshaler with the per-type shapes above.
func (c Chunk) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case ChunkBlockStart:
		return session.Marshal(struct {
			Type      string `json:"type"`
			Index     int    `json:"index"`
			BlockType string `json:"blockType"`
			ID        string `json:"id,omitempty"`
			Name      string `json:"name,omitempty"`
		}{c.Type, c.Index, c.BlockType, c.ID, c.Name})
	case ChunkTextDelta, ChunkReasoningDelta:
		return session.Marshal(struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
			Delta string `json:"delta"`
		}{c.Type, c.Index, c.Delta})
	case ChunkToolCallDelta:
		return session.Marshal(struct {
			Type           string `json:"type"`
			Index          int    `json:"index"`
			ID             string `json:"id,omitempty"`
			Name           string `json:"name,omitempty"`
			ArgumentsDelta string `json:"argumentsDelta"`
		}{c.Type, c.Index, c.ID, c.Name, c.ArgumentsDelta})
	case ChunkBlockEnd:
		return session.Marshal(struct {
			Type  string                `json:"type"`
			Index int                   `json:"index"`
			Block *session.ContentBlock `json:"block"`
		}{c.Type, c.Index, c.Block})
	case ChunkUsage:
		return session.Marshal(struct {
			Type  string         `json:"type"`
			Usage *session.Usage `json:"usage"`
		}{c.Type, c.Usage})
	case ChunkFinish:
		return session.Marshal(struct {
			Type    string           `json:"type"`
			Kind    string           `json:"kind"`
			Failure *session.Failure `json:"failure,omitempty"`
		}{c.Type, c.Kind, c.Failure})
	default:
		return nil, fmt.Errorf("unknown chunk type %q", c.Type)
	}
}

// UnmarshalJSON implements json.Unmarshaler. Besides the shapes above it
// reads the upstream spellings found in recorded fixtures: a delta's text in
// "text" and a finish's outcome nested as "reason":{"kind","failure"}.
func (c *Chunk) UnmarshalJSON(data []byte) error {
	var v struct {
		Type           string                `json:"type"`
		Index          int                   `json:"index"`
		BlockType      string                `json:"blockType"`
		Delta          *string               `json:"delta"`
		Text           *string               `json:"text"`
		ID             string                `json:"id"`
		Name           string                `json:"name"`
		ArgumentsDelta string                `json:"argumentsDelta"`
		Block          *session.ContentBlock `json:"block"`
		Usage          *session.Usage        `json:"usage"`
		Kind           string                `json:"kind"`
		Failure        *session.Failure      `json:"failure"`
		Reason         *struct {
			Kind    string           `json:"kind"`
			Failure *session.Failure `json:"failure"`
		} `json:"reason"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v.Type {
	case ChunkBlockStart, ChunkTextDelta, ChunkReasoningDelta, ChunkToolCallDelta,
		ChunkBlockEnd, ChunkUsage, ChunkFinish:
	default:
		return fmt.Errorf("unknown chunk type %q", v.Type)
	}
	*c = Chunk{
		Type: v.Type, Index: v.Index, BlockType: v.BlockType, ID: v.ID, Name: v.Name,
		ArgumentsDelta: v.ArgumentsDelta, Block: v.Block, Usage: v.Usage, Kind: v.Kind, Failure: v.Failure,
	}
	switch {
	case v.Delta != nil:
		c.Delta = *v.Delta
	case v.Text != nil:
		c.Delta = *v.Text
	}
	if v.Type == ChunkFinish && v.Kind == "" && v.Reason != nil {
		c.Kind, c.Failure = v.Reason.Kind, v.Reason.Failure
	}
	return nil
}
