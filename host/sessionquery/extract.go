package sessionquery

import (
	"encoding/json"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// ExtractText returns the semantic text of one event: the text that the
// literal scan filter, the FTS index and neighbour summaries see. Each part
// is trimmed of JavaScript whitespace, empty parts are dropped and the rest
// are joined with "\n".
//
// Only first-party content counts: message text blocks, tool-call names and
// arguments, nested tool-result content, tool error names and codes, todos,
// and the kind of a non-completed turn end (plus an error's message).
// Reasoning, titles, images, unknown blocks, structural events and unknown
// event types contribute nothing. A payload that does not decode contributes
// what can be read from it, so one malformed block never hides its siblings.
func ExtractText(e session.Event) string {
	var x textScanner
	return x.text(e)
}

// extractTextJSON is the reference extractor, decoding with encoding/json:
// the rules above are spelled out here, and textScanner must agree with it
// on every payload.
func extractTextJSON(e session.Event) string {
	switch e.Type {
	case session.TypeUserMessage:
		var m struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(e.Data, &m) != nil {
			return ""
		}
		return joinParts(contentParts(m.Content, nil))
	case session.TypeAssistantMessage:
		var a struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(e.Data, &a) != nil {
			return ""
		}
		return joinParts(contentParts(a.Message.Content, nil))
	case session.TypeToolCall:
		var c struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(e.Data, &c) != nil {
			return ""
		}
		return joinParts([]string{c.Name, rawText(c.Arguments)})
	case session.TypeToolResult:
		var r struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			Error *struct {
				Name string `json:"name"`
				Code string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(e.Data, &r) != nil {
			return ""
		}
		parts := []string{joinParts(contentParts(r.Message.Content, nil))}
		if r.Error != nil {
			parts = append(parts, r.Error.Name, r.Error.Code)
		}
		return joinParts(parts)
	case session.TypeTodoWrite:
		var t struct {
			Todos []struct {
				Content string `json:"content"`
				Status  string `json:"status"`
			} `json:"todos"`
		}
		if json.Unmarshal(e.Data, &t) != nil {
			return ""
		}
		parts := make([]string, 0, 2*len(t.Todos))
		for _, todo := range t.Todos {
			parts = append(parts, todo.Status, todo.Content)
		}
		return joinParts(parts)
	case session.TypeTurnEnd:
		var t struct {
			Reason struct {
				Kind  string `json:"kind"`
				Error *struct {
					Message string `json:"message"`
				} `json:"error"`
			} `json:"reason"`
		}
		if json.Unmarshal(e.Data, &t) != nil {
			return ""
		}
		return turnEndText(t.Reason.Kind, t.Reason.Error)
	default:
		// The event vocabulary is open. An unknown type stays unsearchable
		// until its owner defines which of its strings are semantic.
		return ""
	}
}

func turnEndText(kind string, failure *struct {
	Message string `json:"message"`
}) string {
	switch kind {
	case session.EndError:
		parts := []string{"error"}
		if failure != nil {
			parts = append(parts, failure.Message)
		}
		return joinParts(parts)
	case session.EndAborted, session.EndMaxTokens, session.EndInterrupted:
		// An abort's cause is who cancelled, not what the session said.
		return kind
	default:
		return ""
	}
}

// blockProbe is the part of a content block that carries semantic text.
type blockProbe struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Content   json.RawMessage `json:"content"`
}

// contentParts appends the semantic parts of a raw content-block array.
// The array is decoded in one pass; if any block is malformed it is decoded
// again block by block, so a bad block is skipped alone.
func contentParts(raw json.RawMessage, parts []string) []string {
	if len(raw) == 0 {
		return parts
	}
	var blocks []blockProbe
	if json.Unmarshal(raw, &blocks) == nil {
		for _, b := range blocks {
			parts = blockParts(b, parts)
		}
		return parts
	}
	var raws []json.RawMessage
	if json.Unmarshal(raw, &raws) != nil {
		return parts
	}
	for _, rb := range raws {
		var b blockProbe
		if json.Unmarshal(rb, &b) == nil {
			parts = blockParts(b, parts)
		}
	}
	return parts
}

func blockParts(b blockProbe, parts []string) []string {
	switch b.Type {
	case session.BlockText:
		if b.Text == nil {
			return parts
		}
		return append(parts, *b.Text)
	case session.BlockToolCall:
		return append(parts, b.Name, rawText(b.Arguments))
	case session.BlockToolResult:
		// Nested content is normally blocks; older writers stored a string.
		var s string
		if json.Unmarshal(b.Content, &s) == nil {
			return append(parts, s)
		}
		return contentParts(b.Content, parts)
	default:
		// Reasoning is deliberately unsearchable; images and plugin blocks
		// do not become searchable merely because they contain strings.
		return parts
	}
}

// rawText returns a JSON string's value, or the raw JSON text of any other
// value (older writers stored tool arguments as objects).
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// joinParts trims each part, drops the empty ones and joins the rest with
// "\n".
func joinParts(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		p = TrimJS(p)
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	return b.String()
}
