package replay

import (
	"encoding/json"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Entry kinds.
const (
	kindChunks = "chunks"
	kindThrow  = "throw"
	kindHang   = "hang"
)

// entry is one scripted model call.
type entry struct {
	kind      string
	chunks    []llm.Chunk
	message   string // throw
	code      string // throw
	readyFile string // hang
	// invalid explains why a recorded call cannot be replayed as is (it
	// ended without a finish: the live stream threw). New fails unless an
	// override patch replaces it.
	invalid string
}

// script is the recorded model calls of one session log.
type script struct {
	file       string
	recordedID string
	createdAt  int64
	primary    bool
	entries    []entry
}

// derive groups the log's assistant/chunk events into one entry per model
// call. A call ends at its finish chunk; a turn or step change before a
// finish closes an unterminated call (a thrown stream), which is marked
// invalid. A compaction/summary flagged llmStreamCall contributes a canonical
// stream of its raw output at its log position.
func derive(events []fixtureEvent) ([]entry, error) {
	var (
		out     []entry
		current []llm.Chunk
		turn    int
		step    int
	)
	closeCall := func() {
		if len(current) == 0 {
			return
		}
		e := entry{kind: kindChunks, chunks: current}
		if current[len(current)-1].Type != llm.ChunkFinish {
			e.invalid = fmt.Sprintf("model call of turn %d step %d ended without a finish chunk (the live stream failed); "+
				"replace it with an override entry", turn, step)
		}
		out = append(out, e)
		current = nil
	}
	for _, ev := range events {
		switch ev.Type {
		case session.TypeCompactionSummary:
			closeCall()
			e, ok, err := summaryCall(ev.Data)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, e)
			}
		case session.TypeAssistantChunk:
			if len(current) > 0 && (ev.Turn != turn || ev.Step != step) {
				closeCall()
			}
			turn, step = ev.Turn, ev.Step
			current = append(current, *ev.Chunk)
			if ev.Chunk.Type == llm.ChunkFinish {
				closeCall()
			}
		}
	}
	closeCall()
	return out, nil
}

// summaryCall reconstructs the stream of a compaction summary produced by
// one model call.
func summaryCall(data json.RawMessage) (entry, bool, error) {
	var s struct {
		LLMStreamCall bool                   `json:"llmStreamCall"`
		RawOutput     []session.ContentBlock `json:"rawOutput"`
		Usage         *session.Usage         `json:"usage"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return entry{}, false, fmt.Errorf("compaction/summary: %w", err)
	}
	if !s.LLMStreamCall {
		return entry{}, false, nil
	}
	if s.RawOutput == nil {
		return entry{}, false, fmt.Errorf("compaction/summary marks a model call but has no rawOutput")
	}
	var chunks []llm.Chunk
	for i, b := range s.RawOutput {
		chunks = append(chunks,
			llm.Chunk{Type: llm.ChunkBlockStart, Index: i, BlockType: b.Type},
			llm.Chunk{Type: llm.ChunkBlockEnd, Index: i, Block: &b})
	}
	if s.Usage != nil {
		chunks = append(chunks, llm.Chunk{Type: llm.ChunkUsage, Usage: s.Usage})
	}
	chunks = append(chunks, llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishStop})
	return entry{kind: kindChunks, chunks: chunks}, true, nil
}
