// Package stream is the vocabulary of a model stream: the Chunk a provider
// yields and the agent loop logs as an assistant/chunk event (block-start,
// text/reasoning/tool-call deltas, block-end, usage, finish), with its JSON
// form, and the Assembler, the single algorithm that folds a chunk stream
// into an assistant message's blocks.
//
// It is pure data and depends on host/session alone, so that the session
// store can read and repair logged streams without the provider seam
// (host/llm, which re-exports these names for providers and the agent loop).
// Anyone may import it.
package stream
