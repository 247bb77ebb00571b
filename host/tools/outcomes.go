package tools

import (
	"errors"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Error codes the pipeline itself assigns. Tools and policies add their own
// (TOOL_TIMEOUT, SESSION_QUERY_*, ...) through Coded errors.
const (
	CodeUnknownTool           = "UNKNOWN_TOOL"
	CodeAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
	CodeAborted               = "ABORTED"
	CodeDenied                = "DENIED"
	CodeInvalidArgs           = "INVALID_ARGS"
	CodeInvalidOutput         = "INVALID_TOOL_OUTPUT"
	CodeToolPanic             = "TOOL_PANIC"
	CodeHookPanic             = "HOOK_PANIC"
	CodeInvalidDecision       = "INVALID_DECISION"
	CodeBlocked               = "BLOCKED"
	CodeToolFailed            = "TOOL_FAILED"
)

// Error names paired with the codes above. Only {name, code} is persisted,
// so these are part of the session log contract.
const (
	NameAbort    = "AbortError"
	NameNotFound = "ToolNotFoundError"
	NameDenied   = "ToolDeniedError"
	NameArgs     = "ToolArgsError"
	NameOutput   = "ToolOutputError"
	NamePanic    = "PanicError"
	NameDecision = "ToolDecisionError"
	NameBlocked  = "ToolBlockedError"
	NameError    = "Error"
)

// Texts of the two cancellation outcomes.
const (
	abortedText               = "tool call aborted"
	abortedBeforeDispatchText = "tool call aborted before dispatch"
)

// ErrorResult converts err into a failed result: content "Error: <message>"
// and Error {message, name, code}, with name and code taken from the first
// Coded error in err's chain and defaulting to Error / TOOL_FAILED. Execute
// wrappers use it to replace a result (for example with TOOL_TIMEOUT).
func ErrorResult(err error) Result {
	name, code := NameError, CodeToolFailed
	var coded Coded
	if errors.As(err, &coded) {
		name, code = coded.ErrorName(), coded.ErrorCode()
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return failure(msg, name, code)
}

func failure(msg, name, code string) Result {
	if msg == "" {
		msg = "tool call failed without a message"
	}
	return Result{
		IsError: true,
		Content: []session.ContentBlock{session.TextBlock("Error: " + msg)},
		Error:   &ErrorInfo{Message: msg, Name: name, Code: code},
	}
}

func unknownTool(name string) Result {
	return failure(fmt.Sprintf("unknown tool %q", name), NameNotFound, CodeUnknownTool)
}

func denied(reason string) Result { return failure(reason, NameDenied, CodeDenied) }

func invalidArgs(violations []string) Result {
	return failure("invalid arguments: "+violationList(violations), NameArgs, CodeInvalidArgs)
}

func invalidOutput(tool string, violations []string) Result {
	return failure(fmt.Sprintf("tool %q returned invalid output: %s", tool, violationList(violations)), NameOutput, CodeInvalidOutput)
}

func invalidDecision(msg string) Result { return failure(msg, NameDecision, CodeInvalidDecision) }

// aborted is the cancellation outcome: ABORTED once the body was invoked,
// ABORTED_BEFORE_DISPATCH otherwise. What the body already did stays
// recorded: additional contexts and mutations survive.
func aborted(bodyStarted bool, prior *Result) Result {
	var r Result
	if bodyStarted {
		r = failure(abortedText, NameAbort, CodeAborted)
	} else {
		r = failure(abortedBeforeDispatchText, NameAbort, CodeAbortedBeforeDispatch)
	}
	if prior != nil {
		r.AdditionalContexts = prior.AdditionalContexts
		r.Mutations = prior.Mutations
	}
	return r
}

// normalized makes the two result invariants hold: content is never nil and
// an error result always carries Error.
func normalized(r Result) Result {
	if r.Content == nil {
		r.Content = []session.ContentBlock{}
	}
	if r.IsError && r.Error == nil {
		msg := session.JoinText(r.Content)
		if msg == "" {
			msg = "tool call failed without a message"
		}
		r.Error = &ErrorInfo{Message: msg, Name: NameError, Code: CodeToolFailed}
	}
	if !r.IsError {
		r.Error = nil
	}
	return r
}

// PersistedError is the part of a result's error that tool/result events
// keep: {name, code}, or nil for a success. The message lives in the content.
func PersistedError(r Result) *session.ToolErrorInfo {
	if !r.IsError {
		return nil
	}
	if r.Error == nil {
		return &session.ToolErrorInfo{Name: NameError, Code: CodeToolFailed}
	}
	return &session.ToolErrorInfo{Name: r.Error.Name, Code: r.Error.Code}
}
