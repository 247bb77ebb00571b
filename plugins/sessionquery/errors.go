package sessionquery

import (
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Codes of the errors the tools raise themselves (session-query.md §4.5).
// Local validation failures use the service's SESSION_QUERY_INVALID_* codes.
const (
	CodeMissingAgent  = "SESSION_QUERY_TOOL_MISSING_AGENT"
	CodeUnauthorized  = "SESSION_QUERY_TOOL_UNAUTHORIZED"
	CodeNoCurrentStep = "SESSION_QUERY_TOOL_NO_CURRENT_STEP"
	CodeToolFailed    = "SESSION_QUERY_TOOL_FAILED"
)

// errorName is the name tool-owned errors carry in tool results (only
// {name, code} is persisted in tool/result events).
const errorName = "HarnessError"

// Fixed texts of the tool-owned errors.
const (
	msgMissingAgent  = "session query tools require an agent-bound caller"
	msgUnauthorized  = "session target is outside the caller workspace"
	msgNoWorkspace   = "cross-session search is unavailable because the caller session has no workspace"
	msgNoCurrentStep = "current-session search requires an active step boundary"
	msgToolFailed    = "session query operation failed"
)

// Every constructor returns a fresh value: an error is never shared between
// executions, so nothing one caller does to it can reach another.

func missingAgent() error { return toolError(CodeMissingAgent, msgMissingAgent) }

func unauthorized() error { return toolError(CodeUnauthorized, msgUnauthorized) }

func noWorkspace() error { return toolError(CodeUnauthorized, msgNoWorkspace) }

func noCurrentStep() error { return toolError(CodeNoCurrentStep, msgNoCurrentStep) }

func toolFailed() error { return toolError(CodeToolFailed, msgToolFailed) }

func toolError(code, msg string) error {
	return &tools.Error{Name: errorName, Code: code, Message: msg}
}
