// Package llm defines the provider seam: a streaming model call that yields
// the chunk vocabulary the agent loop logs as assistant/chunk events
// (block-start, text/reasoning/tool-call deltas, block-end, usage, finish),
// typed failures with retry facts, and model information.
//
// Providers live in sub-packages (openai for DeepSeek and any
// OpenAI-compatible endpoint, replay for recorded sessions). A provider makes
// exactly one attempt per call; retries belong to the agent loop.
package llm
