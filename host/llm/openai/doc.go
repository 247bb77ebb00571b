// Package openai is the streaming chat-completions provider for DeepSeek and
// any OpenAI-compatible endpoint: it serializes an llm.Request into the wire
// body, POSTs it to {base}/chat/completions, parses the server-sent event
// stream and translates it into the llm chunk vocabulary.
//
// One Stream call is one provider attempt; retries belong to the agent loop.
// The API key is resolved per request, so a missing key is an actionable
// MISSING_CREDENTIAL failure at the first prompt, never a start-up error.
// Block ends, usage and the finish are deferred to the [DONE] sentinel, so a
// translated stream always ends block-ends, usage?, finish, and nothing after.
// Every call is bounded: an idle watchdog bounds the time a read (including
// waiting for response headers) may stay outstanding, a keep-alive limit the
// time between events that carry data (SSE comments do not count), and a
// request deadline the whole call. A prompt estimated above the model's
// context window is refused before sending, and streamed output past sixteen
// bytes a max_tokens token ends the answer as a length finish. A refused
// connection or unknown host is UNREACHABLE, which the default retry policy
// does not retry. Caller cancellation closes the connection and yields an
// error matching context.Canceled.
//
// The DeepSeek flavour adds the thinking and reasoning_effort fields and
// replays reasoning_content; the plain OpenAI flavour sends neither. A
// Provider is safe for concurrent use.
package openai
