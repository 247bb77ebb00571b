package openai

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Wire stream shapes. Pointers distinguish absent from empty.

type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int        `json:"index"`
	Delta        *wireDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

type wireDelta struct {
	Content          *string             `json:"content"`
	ReasoningContent *string             `json:"reasoning_content"`
	Reasoning        *string             `json:"reasoning"`
	ToolCalls        []wireToolCallDelta `json:"tool_calls"`
}

type wireToolCallDelta struct {
	Index    *int    `json:"index"`
	ID       *string `json:"id"`
	Function *struct {
		Name      *string `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens         int  `json:"prompt_tokens"`
	CompletionTokens     int  `json:"completion_tokens"`
	PromptCacheHitTokens *int `json:"prompt_cache_hit_tokens"`
	PromptTokensDetails  *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type openBlock struct {
	index    int
	kind     string
	text     strings.Builder
	id, name string
}

// translator turns event payloads into chunks. Deltas stream as they
// arrive; block ends, the latest usage and the finish wait for [DONE] so
// nothing can follow the finish.
type translator struct {
	display   string
	emit      func(llm.Chunk) error
	next      int
	text      *openBlock
	reasoning *openBlock
	tools     map[int]*openBlock // by wire index
	lastTool  *openBlock
	order     []*openBlock
	finish    string
	usage     *session.Usage
	// outputLimit caps the streamed text, reasoning and argument bytes
	// (0: none); output counts them.
	outputLimit int
	output      int
}

// errOutputCap stops a stream whose output passed the translator's limit.
var errOutputCap = errors.New("output cap reached")

func (t *translator) open(kind string) (*openBlock, error) {
	b := &openBlock{index: t.next, kind: kind}
	t.next++
	t.order = append(t.order, b)
	return b, t.emit(llm.Chunk{Type: llm.ChunkBlockStart, Index: b.index, BlockType: kind})
}

// payload handles one data payload other than [DONE].
func (t *translator) payload(ev sseEvent) error {
	if strings.TrimSpace(ev.Data) == "" {
		return nil
	}
	var c wireChunk
	if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
		return &llm.Error{Failure: session.Failure{
			Code:    llm.CodeMalformed,
			Message: "malformed stream payload from " + t.display + ": " + clip(ev.Data, 120),
		}, Cause: err}
	}
	if ev.Name == "error" || (len(c.Error) > 0 && string(c.Error) != "null") {
		return inBandError(t.display, c.Error, ev.Data)
	}
	for _, choice := range c.Choices {
		if choice.Index != 0 {
			continue
		}
		if err := t.delta(choice.Delta); err != nil {
			return err
		}
		if choice.FinishReason != nil && *choice.FinishReason != "" {
			t.finish = *choice.FinishReason
		}
	}
	if c.Usage != nil {
		t.usage = mapUsage(c.Usage)
	}
	return nil
}

func (t *translator) delta(d *wireDelta) error {
	if d == nil {
		return nil
	}
	reasoning := d.ReasoningContent
	if reasoning == nil {
		reasoning = d.Reasoning
	}
	if t.outputLimit > 0 {
		n := len(deref(reasoning)) + len(deref(d.Content))
		for _, c := range d.ToolCalls {
			if c.Function != nil {
				n += len(deref(c.Function.Arguments))
			}
		}
		if t.output += n; t.output > t.outputLimit {
			return errOutputCap
		}
	}
	// An empty first reasoning delta must not open a block.
	if reasoning != nil && *reasoning != "" {
		if t.reasoning == nil {
			b, err := t.open(session.BlockReasoning)
			if err != nil {
				return err
			}
			t.reasoning = b
		}
		t.reasoning.text.WriteString(*reasoning)
		if err := t.emit(llm.Chunk{Type: llm.ChunkReasoningDelta, Index: t.reasoning.index, Delta: *reasoning}); err != nil {
			return err
		}
	}
	if d.Content != nil && *d.Content != "" {
		if t.text == nil {
			b, err := t.open(session.BlockText)
			if err != nil {
				return err
			}
			t.text = b
		}
		t.text.text.WriteString(*d.Content)
		if err := t.emit(llm.Chunk{Type: llm.ChunkTextDelta, Index: t.text.index, Delta: *d.Content}); err != nil {
			return err
		}
	}
	for _, call := range d.ToolCalls {
		if err := t.toolDelta(call); err != nil {
			return err
		}
	}
	return nil
}

func (t *translator) toolDelta(call wireToolCallDelta) error {
	b, err := t.toolBlock(call)
	if err != nil {
		return err
	}
	learnt := false
	if call.ID != nil && *call.ID != "" && b.id == "" {
		b.id, learnt = *call.ID, true
	}
	var fragment string
	if call.Function != nil {
		if call.Function.Name != nil && *call.Function.Name != "" && b.name == "" {
			b.name, learnt = *call.Function.Name, true
		}
		if call.Function.Arguments != nil {
			fragment = *call.Function.Arguments
		}
	}
	if fragment == "" && !learnt {
		return nil
	}
	b.text.WriteString(fragment)
	return t.emit(llm.Chunk{Type: llm.ChunkToolCallDelta, Index: b.index, ID: b.id, Name: b.name, ArgumentsDelta: fragment})
}

// toolBlock finds the block of a tool-call delta by wire index. Servers that
// omit the index get a new block per new id, else the latest block.
func (t *translator) toolBlock(call wireToolCallDelta) (*openBlock, error) {
	key := -1
	switch {
	case call.Index != nil:
		key = *call.Index
	case call.ID != nil && *call.ID != "" && (t.lastTool == nil || t.lastTool.id != *call.ID):
		key = -2 - len(t.tools)
	case t.lastTool != nil:
		return t.lastTool, nil
	}
	if b, ok := t.tools[key]; ok {
		t.lastTool = b
		return b, nil
	}
	b, err := t.open(session.BlockToolCall)
	if err != nil {
		return nil, err
	}
	if t.tools == nil {
		t.tools = map[int]*openBlock{}
	}
	t.tools[key] = b
	t.lastTool = b
	return b, nil
}

// done emits the deferred tail at [DONE]: block ends in open order, the
// latest usage, then the finish.
func (t *translator) done() error {
	for _, b := range t.order {
		var block session.ContentBlock
		switch b.kind {
		case session.BlockToolCall:
			id := b.id
			if id == "" {
				id = "call-" + strconv.Itoa(b.index)
			}
			block = session.ToolCallBlock(id, b.name, b.text.String())
		case session.BlockReasoning:
			block = session.ReasoningBlock(b.text.String())
		default:
			block = session.TextBlock(b.text.String())
		}
		if err := t.emit(llm.Chunk{Type: llm.ChunkBlockEnd, Index: b.index, Block: &block}); err != nil {
			return err
		}
	}
	if t.usage != nil {
		if err := t.emit(llm.Chunk{Type: llm.ChunkUsage, Usage: t.usage}); err != nil {
			return err
		}
	}
	return t.emit(finishChunk(t.finish, len(t.order)))
}

func finishChunk(reason string, blocks int) llm.Chunk {
	switch reason {
	case "", "stop":
		if blocks == 0 {
			return llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishError, Failure: &session.Failure{
				Code: llm.CodeEmptyResponse, Message: "model returned a completed response with no content",
			}}
		}
		return llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishStop}
	case "tool_calls":
		return llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishToolCalls}
	case "length":
		return llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishMaxTokens}
	default:
		return llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishError, Failure: &session.Failure{
			Code: strings.ToUpper(reason), Message: "model stopped: " + reason,
		}}
	}
}

// mapUsage makes the wire counts disjoint: prompt_tokens includes cache hits.
func mapUsage(u *wireUsage) *session.Usage {
	var cacheRead *int
	if u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens != nil {
		cacheRead = u.PromptTokensDetails.CachedTokens
	} else {
		cacheRead = u.PromptCacheHitTokens
	}
	out := &session.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if cacheRead != nil {
		out.CacheReadTokens = *cacheRead
		out.InputTokens -= *cacheRead
	}
	if u.CompletionTokensDetails != nil && u.CompletionTokensDetails.ReasoningTokens != nil {
		out.ReasoningTokens = *u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
