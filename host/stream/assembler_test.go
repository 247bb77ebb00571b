package stream

import (
	"reflect"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func start(i int, bt string) Chunk { return Chunk{Type: ChunkBlockStart, Index: i, BlockType: bt} }
func text(i int, d string) Chunk   { return Chunk{Type: ChunkTextDelta, Index: i, Delta: d} }
func think(i int, d string) Chunk  { return Chunk{Type: ChunkReasoningDelta, Index: i, Delta: d} }
func call(i int, id, name, args string) Chunk {
	return Chunk{Type: ChunkToolCallDelta, Index: i, ID: id, Name: name, ArgumentsDelta: args}
}
func end(i int, b session.ContentBlock) Chunk { return Chunk{Type: ChunkBlockEnd, Index: i, Block: &b} }
func finish(kind string) Chunk                { return Chunk{Type: ChunkFinish, Kind: kind} }

func assemble(chunks ...Chunk) *Assembler {
	var a Assembler
	for _, c := range chunks {
		a.Push(c)
	}
	return &a
}

func TestAssemblerBlocks(t *testing.T) {
	tests := []struct {
		name   string
		chunks []Chunk
		want   []session.ContentBlock
	}{
		{
			name: "reasoning then text in first-seen order",
			chunks: []Chunk{
				start(0, "reasoning"), think(0, "Let me "), think(0, "think."),
				start(1, "text"), text(1, "Hel"), text(1, "lo"),
				end(0, session.ReasoningBlock("Let me think.")), end(1, session.TextBlock("Hello")),
				finish(FinishStop),
			},
			want: []session.ContentBlock{session.ReasoningBlock("Let me think."), session.TextBlock("Hello")},
		},
		{
			name: "block-end is authoritative over deltas",
			chunks: []Chunk{
				start(0, "text"), text(0, "draft"), end(0, session.TextBlock("final")), finish(FinishStop),
			},
			want: []session.ContentBlock{session.TextBlock("final")},
		},
		{
			name: "deltas and a second block-end after close are ignored",
			chunks: []Chunk{
				start(0, "text"), text(0, "a"), end(0, session.TextBlock("a")), text(0, "late"),
				end(0, session.TextBlock("other")), finish(FinishStop),
			},
			want: []session.ContentBlock{session.TextBlock("a")},
		},
		{
			name: "delta-only stream assembles from deltas",
			chunks: []Chunk{
				text(3, "x"), call(5, "c1", "read", `{"pa`), call(5, "", "", `th":"a"}`), text(3, "y"),
			},
			want: []session.ContentBlock{session.TextBlock("xy"), session.ToolCallBlock("c1", "read", `{"path":"a"}`)},
		},
		{
			name:   "tool call without id gets a stable synthetic id",
			chunks: []Chunk{start(2, "tool-call"), call(2, "", "bash", "{}")},
			want:   []session.ContentBlock{session.ToolCallBlock("call-2", "bash", "{}")},
		},
		{
			name: "max-tokens drops every tool call",
			chunks: []Chunk{
				start(0, "text"), text(0, "Reading"), start(1, "tool-call"), call(1, "c1", "read", `{"path":`),
				start(2, "tool-call"), call(2, "c2", "read", `{}`), end(2, session.ToolCallBlock("c2", "read", "{}")),
				finish(FinishMaxTokens),
			},
			want: []session.ContentBlock{session.TextBlock("Reading")},
		},
		{
			name: "tool calls survive a tool-calls finish",
			chunks: []Chunk{
				start(0, "tool-call"), call(0, "c1", "read", `{}`),
				end(0, session.ToolCallBlock("c1", "read", "{}")), finish(FinishToolCalls),
			},
			want: []session.ContentBlock{session.ToolCallBlock("c1", "read", "{}")},
		},
		{
			name:   "unknown block type never closed is left out",
			chunks: []Chunk{start(0, "image"), start(1, "text"), text(1, "ok")},
			want:   []session.ContentBlock{session.TextBlock("ok")},
		},
		{
			name:   "no chunks, no blocks",
			chunks: nil,
			want:   []session.ContentBlock{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assemble(tt.chunks...).Blocks()
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Blocks() =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestAssemblerInterruptedKeepsOnlyNonBlankTextAndReasoning(t *testing.T) {
	a := assemble(
		start(0, "reasoning"), think(0, " \n\t"),
		start(1, "text"), text(1, "partial"),
		start(2, "tool-call"), call(2, "c1", "bash", `{"command":"ls"}`),
		start(3, "reasoning"), think(3, "more"),
		start(4, "text"), text(4, "   "),
	)
	want := []session.ContentBlock{session.TextBlock("partial"), session.ReasoningBlock("more")}
	if got := a.Interrupted(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Interrupted() = %#v, want %#v", got, want)
	}
	if got := assemble(start(0, "text"), text(0, "  ")).Interrupted(); len(got) != 0 {
		t.Fatalf("blank stream kept %#v", got)
	}
}

func TestAssemblerFinishAndUsage(t *testing.T) {
	var a Assembler
	if a.Finished() || a.Finish().Kind != FinishStop || a.Usage() != nil {
		t.Fatalf("zero assembler: finished=%v finish=%+v usage=%v", a.Finished(), a.Finish(), a.Usage())
	}
	a.Push(Chunk{Type: ChunkUsage, Usage: &session.Usage{InputTokens: 1, OutputTokens: 1}})
	a.Push(Chunk{Type: ChunkUsage, Usage: &session.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 5}})
	failure := &session.Failure{Code: "CONTENT_FILTER", Message: "model stopped: content_filter"}
	a.Push(Chunk{Type: ChunkFinish, Kind: FinishError, Failure: failure})
	failure.Code = "MUTATED"

	if got := a.Usage(); *got != (session.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 5}) {
		t.Fatalf("Usage() = %+v, want the latest usage", got)
	}
	f := a.Finish()
	if !a.Finished() || f.Kind != FinishError || f.Failure == nil || f.Failure.Code != "CONTENT_FILTER" {
		t.Fatalf("Finish() = %+v (failure %+v)", f, f.Failure)
	}
}

func TestAssemblerBlocksAreCopies(t *testing.T) {
	a := assemble(start(0, "text"), end(0, session.TextBlock("keep")))
	a.Blocks()[0].Text = "changed"
	if got := a.Blocks()[0].Text; got != "keep" {
		t.Fatalf("caller mutation leaked into the assembler: %q", got)
	}
}
