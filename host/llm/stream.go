package llm

import "github.com/seed-e9b4dba4/dsh/host/stream"

// The chunk vocabulary and its assembly live in host/stream, which the
// session store reads without importing the provider seam; these are the
// same types and values under the names providers and the agent loop use.
type (
	// Chunk is one element of a model stream (stream.Chunk).
	Chunk = stream.Chunk
	// Assembler folds a chunk stream into an assistant message's blocks
	// (stream.Assembler).
	Assembler = stream.Assembler
	// Finish is the outcome a stream's finish chunk reported
	// (stream.Finish).
	Finish = stream.Finish
)

// Chunk types.
const (
	ChunkBlockStart     = stream.ChunkBlockStart
	ChunkTextDelta      = stream.ChunkTextDelta
	ChunkReasoningDelta = stream.ChunkReasoningDelta
	ChunkToolCallDelta  = stream.ChunkToolCallDelta
	ChunkBlockEnd       = stream.ChunkBlockEnd
	ChunkUsage          = stream.ChunkUsage
	ChunkFinish         = stream.ChunkFinish
)

// Finish kinds.
const (
	FinishStop      = stream.FinishStop
	FinishToolCalls = stream.FinishToolCalls
	FinishMaxTokens = stream.FinishMaxTokens
	FinishError     = stream.FinishError
	FinishAborted   = stream.FinishAborted
)
