package session

import (
	"encoding/json"
	"fmt"
)

// Content block types.
const (
	BlockText       = "text"
	BlockReasoning  = "reasoning"
	BlockToolCall   = "tool-call"
	BlockToolResult = "tool-result"
	BlockImage      = "image"
)

// ContentBlock is one block of a message. Only the fields of its Type are
// encoded, in a fixed order:
//
//	text        {type, text}
//	reasoning   {type, text}
//	tool-call   {type, id, name, arguments}   (arguments: the raw argument string)
//	tool-result {type, toolCallId, content, isError}
//
// Any other type (image, plugin blocks) round-trips through Raw untouched.
type ContentBlock struct {
	Type       string
	Text       string
	ID         string
	Name       string
	Arguments  string
	ToolCallID string
	Content    []ContentBlock
	IsError    bool
	Raw        json.RawMessage
}

// TextBlock returns a text block.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: BlockText, Text: text} }

// ReasoningBlock returns a reasoning block.
func ReasoningBlock(text string) ContentBlock { return ContentBlock{Type: BlockReasoning, Text: text} }

// ToolCallBlock returns a tool-call block with the raw argument string.
func ToolCallBlock(id, name, arguments string) ContentBlock {
	return ContentBlock{Type: BlockToolCall, ID: id, Name: name, Arguments: arguments}
}

// ToolResultBlock returns a tool-result block wrapping content.
func ToolResultBlock(callID string, content []ContentBlock, isError bool) ContentBlock {
	if content == nil {
		content = []ContentBlock{}
	}
	return ContentBlock{Type: BlockToolResult, ToolCallID: callID, Content: content, IsError: isError}
}

// MarshalJSON implements json.Marshaler with the per-type key order above.
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case BlockText, BlockReasoning:
		return Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{b.Type, b.Text})
	case BlockToolCall:
		return Marshal(struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{b.Type, b.ID, b.Name, b.Arguments})
	case BlockToolResult:
		content := b.Content
		if content == nil {
			content = []ContentBlock{}
		}
		return Marshal(struct {
			Type       string         `json:"type"`
			ToolCallID string         `json:"toolCallId"`
			Content    []ContentBlock `json:"content"`
			IsError    bool           `json:"isError"`
		}{b.Type, b.ToolCallID, content, b.IsError})
	default:
		if len(b.Raw) > 0 {
			return b.Raw, nil
		}
		return Marshal(struct {
			Type string `json:"type"`
		}{b.Type})
	}
}

// UnmarshalJSON implements json.Unmarshaler. Unknown block types keep their
// raw bytes in Raw.
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	var probe struct {
		Type       string          `json:"type"`
		Text       *string         `json:"text"`
		ID         string          `json:"id"`
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		ToolCallID string          `json:"toolCallId"`
		Content    json.RawMessage `json:"content"`
		IsError    bool            `json:"isError"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	*b = ContentBlock{Type: probe.Type}
	switch probe.Type {
	case BlockText, BlockReasoning:
		if probe.Text == nil {
			return fmt.Errorf("%s block has no text", probe.Type)
		}
		b.Text = *probe.Text
	case BlockToolCall:
		b.ID, b.Name = probe.ID, probe.Name
		// Arguments are normally the raw string the model produced; tolerate
		// an object (older writers) by keeping its JSON text.
		if len(probe.Arguments) > 0 {
			var s string
			if err := json.Unmarshal(probe.Arguments, &s); err == nil {
				b.Arguments = s
			} else {
				b.Arguments = string(probe.Arguments)
			}
		}
	case BlockToolResult:
		b.ToolCallID, b.IsError = probe.ToolCallID, probe.IsError
		b.Content = []ContentBlock{}
		if len(probe.Content) > 0 && string(probe.Content) != "null" {
			var inner []ContentBlock
			if err := json.Unmarshal(probe.Content, &inner); err != nil {
				var s string
				if json.Unmarshal(probe.Content, &s) != nil {
					return fmt.Errorf("tool-result content: %w", err)
				}
				inner = []ContentBlock{TextBlock(s)}
			}
			b.Content = inner
		}
	default:
		b.Raw = append(json.RawMessage(nil), data...)
	}
	return nil
}

// Clone returns a deep copy of b.
func (b ContentBlock) Clone() ContentBlock {
	c := b
	c.Raw = cloneRaw(b.Raw)
	if b.Content != nil {
		c.Content = make([]ContentBlock, len(b.Content))
		for i, inner := range b.Content {
			c.Content[i] = inner.Clone()
		}
	}
	return c
}

// JoinText concatenates the text of every text block (no separator), the way a
// provider flattens a message for the wire.
func JoinText(blocks []ContentBlock) string {
	var n int
	for _, b := range blocks {
		if b.Type == BlockText {
			n += len(b.Text)
		}
	}
	out := make([]byte, 0, n)
	for _, b := range blocks {
		if b.Type == BlockText {
			out = append(out, b.Text...)
		}
	}
	return string(out)
}
