// Package llm defines the provider seam: a streaming model call that yields
// the chunk vocabulary the agent loop logs as assistant/chunk events
// (block-start, text/reasoning/tool-call deltas, block-end, usage, finish),
// typed failures with retry facts, and model information.
//
// It also names the two pure pieces every caller of a provider shares: the
// Assembler, the single algorithm that folds a chunk stream into an
// assistant message's blocks (defined with the chunk vocabulary in
// host/stream, which the session store reads without this seam), and the
// RetryPolicy that decides whether and when a failed call is retried, with
// RetryConfig, the llm.retry config section it is made from (its defaults
// are configs/default.yaml's, read through host/config).
//
// Providers live in sub-packages (openai for DeepSeek and any
// OpenAI-compatible endpoint, replay for recorded sessions). A provider makes
// exactly one attempt per call; retries belong to the agent loop.
package llm
