package session

import "encoding/json"

// Payloads of the host's event types. Field order is on-disk key order.

// TurnStart is the data of turn/start.
type TurnStart struct {
	Turn int `json:"turn"`
}

// StepBoundary is the data of step/start and step/end.
type StepBoundary struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
}

// Turn-end reason kinds.
const (
	EndCompleted   = "completed"
	EndAborted     = "aborted"
	EndBlocked     = "blocked"
	EndError       = "error"
	EndMaxTokens   = "max-tokens"
	EndInterrupted = "interrupted"
)

// CancelCause says who cancelled a turn: user, parent, hook or disposed.
type CancelCause struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
}

// Failure is a typed model or turn failure as logged in finish chunks and
// turn/end error reasons.
type Failure struct {
	Message              string `json:"message"`
	Code                 string `json:"code"`
	Status               int    `json:"status,omitempty"`
	ProviderRetryAfterMs int64  `json:"providerRetryAfterMs,omitempty"`
	RequestID            string `json:"requestId,omitempty"`
}

// TurnEndReason is the reason of turn/end.
type TurnEndReason struct {
	Kind   string       `json:"kind"`
	Reason *CancelCause `json:"reason,omitempty"` // aborted
	Error  *Failure     `json:"error,omitempty"`  // error
}

// TurnEnd is the data of turn/end.
type TurnEnd struct {
	Turn   int           `json:"turn"`
	Reason TurnEndReason `json:"reason"`
}

// Usage is the token usage of one model call. Counts are disjoint: Input
// excludes CacheRead; Reasoning is informational and already inside Output.
type Usage struct {
	InputTokens     int `json:"inputTokens"`
	OutputTokens    int `json:"outputTokens"`
	CacheReadTokens int `json:"cacheReadTokens,omitempty"`
	ReasoningTokens int `json:"reasoningTokens,omitempty"`
}

// AssistantChunk is the data of assistant/chunk: one raw stream chunk.
type AssistantChunk struct {
	Turn  int             `json:"turn"`
	Step  int             `json:"step"`
	Chunk json.RawMessage `json:"chunk"`
}

// AssistantMessage is the data of assistant/message.
type AssistantMessage struct {
	Turn        int     `json:"turn"`
	Step        int     `json:"step"`
	Message     Message `json:"message"`
	Usage       *Usage  `json:"usage,omitempty"`
	Interrupted bool    `json:"interrupted,omitempty"`
}

// ToolCall is the data of tool/call. Arguments is the raw model string.
type ToolCall struct {
	Turn      int    `json:"turn"`
	Step      int    `json:"step"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolErrorInfo is the only part of a tool error that is persisted.
type ToolErrorInfo struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// ToolResult is the data of tool/result. Message is a user-role message whose
// single content block is a tool-result block.
type ToolResult struct {
	Turn      int             `json:"turn"`
	Step      int             `json:"step"`
	Message   Message         `json:"message"`
	Error     *ToolErrorInfo  `json:"error,omitempty"`
	Meta      json.RawMessage `json:"meta,omitempty"`
	Mutations json.RawMessage `json:"mutations,omitempty"`
}

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// Todo is one entry of todo/write.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// TodoWrite is the data of todo/write: the whole list, replacing the last.
type TodoWrite struct {
	Todos []Todo `json:"todos"`
}

// Title source kinds.
const (
	TitleFallback = "fallback"
	TitleProvider = "provider"
	TitleUser     = "user"
)

// SessionTitle is the data of session/title.
type SessionTitle struct {
	Title       string          `json:"title"`
	MessageSeqs []int           `json:"messageSeqs"`
	Source      json.RawMessage `json:"source"`
}

// CallConfig is the model call configuration recorded in a request header.
// Key order: provider, model, maxTokens, reasoningEffort.
type CallConfig struct {
	Provider        string `json:"provider"`
	Model           string `json:"model"`
	MaxTokens       *int   `json:"maxTokens,omitempty"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
}

// AdapterDefaults marks config fields the adapter filled in.
type AdapterDefaults struct {
	ReasoningEffort bool `json:"reasoningEffort,omitempty"`
	MaxTokens       bool `json:"maxTokens,omitempty"`
}

// EpochHeader is everything about a request that is not the conversation:
// config, system prompt and tool schemas. Empty values are absent.
type EpochHeader struct {
	Config          CallConfig        `json:"config"`
	AdapterDefaults *AdapterDefaults  `json:"adapterDefaults,omitempty"`
	System          string            `json:"system,omitempty"`
	Tools           []json.RawMessage `json:"tools,omitempty"`
}

// Request-header reasons.
const (
	HeaderInitial = "initial"
	HeaderResume  = "resume"
	HeaderChange  = "change"
)

// RequestHeader is the data of request/header.
type RequestHeader struct {
	Header EpochHeader `json:"header"`
	Reason string      `json:"reason"`
}

// RequestContext is the data of request/context.
type RequestContext struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow int    `json:"contextWindow,omitempty"`
}

// LLMRetry is the data of llm/retry.
type LLMRetry struct {
	RetryID    string  `json:"retryId"`
	Turn       int     `json:"turn"`
	Step       int     `json:"step"`
	Provider   string  `json:"provider"`
	Mode       string  `json:"mode"`
	PolicyKey  string  `json:"policyKey"`
	Failure    Failure `json:"failure"`
	DelayMs    int64   `json:"delayMs"`
	Retry      int     `json:"retry"`
	MaxRetries int     `json:"maxRetries,omitempty"`
}

// LLMRetryStarted is the data of llm/retry-started.
type LLMRetryStarted struct {
	RetryID string `json:"retryId"`
	Turn    int    `json:"turn"`
	Step    int    `json:"step"`
	Retry   int    `json:"retry"`
}
