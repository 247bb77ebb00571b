package openai

import (
	"encoding/json"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Wire request shapes. Field order is serialization order; optional fields
// are omitted, never null.

type wireRequest struct {
	Model           string        `json:"model"`
	Messages        []any         `json:"messages"`
	Stream          bool          `json:"stream"`
	StreamOptions   streamOptions `json:"stream_options"`
	Thinking        *wireThinking `json:"thinking,omitempty"`
	ReasoningEffort string        `json:"reasoning_effort,omitempty"`
	Tools           []wireTool    `json:"tools,omitempty"`
	Temperature     *float64      `json:"temperature,omitempty"`
	MaxTokens       *int          `json:"max_tokens,omitempty"`
	Stop            []string      `json:"stop,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireThinking struct {
	Type string `json:"type"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type textMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type toolMessage struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

type assistantMessage struct {
	Role             string         `json:"role"`
	Content          string         `json:"content"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function wireCallFunction `json:"function"`
}

type wireCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// imagePlaceholder stands in for image content on this text-only route, so
// the model knows something was there instead of silently losing it.
const imagePlaceholder = "[image omitted: this model accepts text only]"

// emptyToolOutput is sent for a tool result without text: the wire requires
// some content.
const emptyToolOutput = "(no output)"

// body builds the request body for req, failing before any I/O on an
// unsupported reasoning effort or a missing model.
func (p *Provider) body(req llm.Request) ([]byte, error) {
	if req.Config.Model == "" {
		return nil, llm.Failf(llm.CodeInvalidRequest, "%s request has no model; set llm.model", p.cfg.Name)
	}
	thinking, effort, err := p.thinking(req)
	if err != nil {
		return nil, err
	}
	w := wireRequest{
		Model:           req.Config.Model,
		Messages:        p.messages(req),
		Stream:          true,
		StreamOptions:   streamOptions{IncludeUsage: true},
		ReasoningEffort: effort,
		Temperature:     req.Temperature,
		MaxTokens:       req.Config.MaxTokens,
		Stop:            req.Stop,
	}
	if thinking != "" {
		w.Thinking = &wireThinking{Type: thinking}
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunction{t.Name, t.Description, params}})
	}
	return session.Marshal(w)
}

// thinking resolves the DeepSeek thinking mode and wire effort of one
// request. A title request always runs without thinking so its small budget
// produces visible text.
func (p *Provider) thinking(req llm.Request) (thinking, effort string, err error) {
	requested := req.Config.ReasoningEffort
	if !p.cfg.DeepSeek {
		if requested != "" && requested != EffortOff {
			return "", "", llm.Failf(llm.CodeUnsupportedEffort,
				"the %s provider does not support reasoning effort %q; remove llm.reasoning_effort", p.cfg.Name, requested)
		}
		return "", "", nil
	}
	if req.Purpose == llm.PurposeTitle {
		return ThinkingDisabled, "", nil
	}
	if requested != "" && !validEffort(requested) {
		return "", "", llm.Failf(llm.CodeUnsupportedEffort,
			"%s does not support reasoning effort %q; use off, low, high or max", p.display, requested)
	}
	e := requested
	if e == "" {
		e = p.cfg.ReasoningEffort
	}
	if p.cfg.Thinking == ThinkingDisabled && e != "" && e != EffortOff {
		return "", "", llm.Failf(llm.CodeUnsupportedEffort,
			"%s thinking is disabled by configuration, so reasoning effort %q is unavailable; use off", p.display, e)
	}
	switch e {
	case EffortOff:
		return ThinkingDisabled, "", nil
	case EffortLow, EffortHigh, EffortMax:
		return ThinkingEnabled, e, nil
	default:
		return p.cfg.Thinking, "", nil
	}
}

// messages maps the system prompt and derived history to wire messages.
func (p *Provider) messages(req llm.Request) []any {
	out := make([]any, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, textMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		if m.Role == session.RoleAssistant {
			if a, ok := p.assistant(m); ok {
				out = append(out, a)
			}
			continue
		}
		text := flatten(m.Content)
		var results []session.ContentBlock
		for _, b := range m.Content {
			if b.Type == session.BlockToolResult {
				results = append(results, b)
			}
		}
		if text != "" || len(results) == 0 {
			out = append(out, textMessage{Role: "user", Content: text})
		}
		for _, r := range results {
			content := flatten(r.Content)
			if content == "" {
				content = emptyToolOutput
			}
			out = append(out, toolMessage{Role: "tool", ToolCallID: r.ToolCallID, Content: content})
		}
	}
	return out
}

// assistant maps one assistant message. Content is "" (never null) when the
// turn had no text; reasoning is replayed on every turn that had some, as
// DeepSeek thinking mode requires. A message with nothing to send is dropped:
// the API rejects an assistant turn without content and tool calls.
func (p *Provider) assistant(m session.Message) (assistantMessage, bool) {
	a := assistantMessage{Role: "assistant", Content: flatten(m.Content)}
	var reasoning strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case session.BlockReasoning:
			reasoning.WriteString(b.Text)
		case session.BlockToolCall:
			a.ToolCalls = append(a.ToolCalls, wireToolCall{
				ID: b.ID, Type: "function", Function: wireCallFunction{Name: b.Name, Arguments: b.Arguments},
			})
		}
	}
	if p.cfg.DeepSeek && reasoning.Len() > 0 {
		r := reasoning.String()
		a.ReasoningContent = &r
	}
	ok := a.Content != "" || a.ReasoningContent != nil || len(a.ToolCalls) > 0
	return a, ok
}

// flatten concatenates text blocks (no separator) and marks images.
func flatten(blocks []session.ContentBlock) string {
	var sb strings.Builder
	for _, b := range blocks {
		switch b.Type {
		case session.BlockText:
			sb.WriteString(b.Text)
		case session.BlockImage:
			sb.WriteString(imagePlaceholder)
		}
	}
	return sb.String()
}
