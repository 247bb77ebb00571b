package session

import (
	"encoding/json"
	"fmt"
	"testing"
)

// evOpt adjusts a test event.
type evOpt func(*Event)

// op sets surfaceOp to raw JSON (or removes it when raw is "").
func op(raw string) evOpt {
	return func(e *Event) {
		if raw == "" {
			e.SurfaceOp = nil
			return
		}
		e.SurfaceOp = json.RawMessage(raw)
	}
}

// replace sets surfaceOp to a replace of start..end.
func replace(start, end int) evOpt { return func(e *Event) { e.SurfaceOp = OpReplace(start, end) } }

// src sets sourceEventSeqs to the given seqs.
func src(seqs ...int) evOpt { return func(e *Event) { e.SourceEventSeqs = Sources(seqs...) } }

// rawSrc sets sourceEventSeqs to raw JSON.
func rawSrc(raw string) evOpt { return func(e *Event) { e.SourceEventSeqs = json.RawMessage(raw) } }

// at overrides the seq.
func at(seq int) evOpt { return func(e *Event) { e.Seq = seq } }

func build(seq int, typ string, data any, opts []evOpt) Event {
	e := Event{Type: typ, Seq: seq, Time: int64(1000 + seq), Data: MustMarshal(data)}
	if IsSurfaceType(typ) {
		e.SurfaceOp = OpAppend
	}
	for _, o := range opts {
		o(&e)
	}
	return e
}

func userMsg(seq int, text string) Message {
	return Message{Role: RoleUser, Content: []ContentBlock{TextBlock(text)}, Source: UserSource, ID: fmt.Sprintf("u-%d", seq)}
}

func userEv(seq int, text string, opts ...evOpt) Event {
	return build(seq, TypeUserMessage, userMsg(seq, text), opts)
}

func pluginUserEv(seq int, text string, opts ...evOpt) Event {
	m := userMsg(seq, text)
	m.Source = PluginSource("compaction", "summary")
	return build(seq, TypeUserMessage, m, opts)
}

func assistantMsg(seq int, blocks ...ContentBlock) Message {
	if blocks == nil {
		blocks = []ContentBlock{}
	}
	return Message{Role: RoleAssistant, Content: blocks, Source: ModelSource("deepseek", "deepseek-v4-flash"), ID: fmt.Sprintf("a-%d", seq)}
}

func assistantEv(seq int, text string, opts ...evOpt) Event {
	var blocks []ContentBlock
	if text != "" {
		blocks = []ContentBlock{TextBlock(text)}
	}
	return build(seq, TypeAssistantMessage, AssistantMessage{Turn: 1, Step: 1, Message: assistantMsg(seq, blocks...)}, opts)
}

func toolResultData(callID, text string) ToolResult {
	return ToolResult{Turn: 1, Step: 1, Message: Message{
		Role:    RoleUser,
		Content: []ContentBlock{ToolResultBlock(callID, []ContentBlock{TextBlock(text)}, false)},
		Source:  ToolSource(callID),
		ID:      "r-" + callID,
	}}
}

func toolResultEv(seq int, callID, text string, opts ...evOpt) Event {
	return build(seq, TypeToolResult, toolResultData(callID, text), opts)
}

// logEv builds a non-surface event.
func logEv(seq int, typ string, data any, opts ...evOpt) Event {
	if data == nil {
		data = struct{}{}
	}
	return build(seq, typ, data, opts)
}

func mustFold(t *testing.T, events []Event) *SurfaceFold {
	t.Helper()
	f, err := Fold(events)
	if err != nil {
		t.Fatalf("Fold: %v", err)
	}
	return f
}
