package llm

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/stream"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// ServiceKey is the host service holding the configured provider.
var ServiceKey = host.NewKey[Provider]("llm")

// Request purposes.
const (
	PurposeTurn       = ""
	PurposeCompaction = "compaction"
	PurposeTitle      = "session-title"
)

// Request is one model call: the header fields (config, system, tools) plus
// the derived conversation.
type Request struct {
	SessionID string
	Config    session.CallConfig
	System    string
	Tools     []tools.Schema
	Messages  []session.Message
	Purpose   string
	// Temperature and Stop are optional sampling overrides; nil sends the
	// provider defaults.
	Temperature *float64
	Stop        []string
}

// ModelInfo is what the host knows about a model.
type ModelInfo struct {
	ID               string
	Name             string
	ContextWindow    int // 0: unknown
	DefaultMaxTokens int // 0: leave unset
	Efforts          []string
	DefaultEffort    string
}

// Provider streams one model call. Stream calls yield for every chunk in
// order and returns once the stream ended. A non-nil error means the call
// failed before or during streaming; the agent loop turns it into a finish
// chunk of kind error (or aborted when ctx was cancelled). If yield returns
// an error, the provider stops and returns it.
type Provider interface {
	// Name is the provider route recorded in request headers.
	Name() string
	Stream(ctx context.Context, req Request, yield func(Chunk) error) error
	// Models lists the advisory catalog.
	Models() []ModelInfo
	// Model resolves a model id (unknown ids get defaults).
	Model(id string) ModelInfo
}

// Failure codes.
const (
	CodeMissingCredential = "MISSING_CREDENTIAL"
	CodeInvalidCredential = "INVALID_CREDENTIAL"
	CodeAuth              = "AUTH"
	CodeRateLimit         = "RATE_LIMIT"
	CodeQuota             = "QUOTA"
	CodeContextExceeded   = "CONTEXT_WINDOW_EXCEEDED"
	CodeInvalidRequest    = "INVALID_REQUEST"
	CodeServer            = "SERVER"
	CodeTransport         = "TRANSPORT"
	// CodeUnreachable is a connection refused or a host name that does not
	// resolve: a configuration problem, never retried.
	CodeUnreachable       = "UNREACHABLE"
	CodeTimeout           = "TIMEOUT"
	CodeStreamClosed      = "STREAM_CLOSED"
	CodeMalformed         = "MALFORMED_RESPONSE"
	CodeEmptyResponse     = "EMPTY_RESPONSE"
	CodeAborted           = stream.CodeAborted
	CodeUnsupportedEffort = "UNSUPPORTED_REASONING_EFFORT"
	CodeReplay            = "REPLAY"
	// CodeScriptOver ends a scripted conversation (the demo) normally:
	// front ends show it as a remark, not as a model failure.
	CodeScriptOver = "SCRIPT_OVER"
	CodeUnknown    = "UNKNOWN"
	// CodeContentFilter is a reply the provider's content filter stopped
	// (OpenAI's finish_reason "content_filter"): a refusal, not a fault.
	CodeContentFilter = "CONTENT_FILTER"
)

// Error is a typed provider failure.
type Error struct {
	session.Failure
	Cause error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Code, e.Status)
	}
	return fmt.Sprintf("%s (%s)", e.Message, e.Code)
}

func (e *Error) Unwrap() error { return e.Cause }

// Failf returns an *Error with the given code.
func Failf(code, format string, args ...any) *Error {
	return &Error{Failure: session.Failure{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// AsFailure returns the failure facts of err: the typed failure when err is
// (or wraps) an *Error, else UNKNOWN with the error text.
func AsFailure(err error) session.Failure {
	var e *Error
	if errors.As(err, &e) {
		return e.Failure
	}
	return session.Failure{Code: CodeUnknown, Message: err.Error()}
}
