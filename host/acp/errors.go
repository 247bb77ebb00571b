package acp

import (
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// JSON-RPC error codes of handler errors.
const (
	codeInvalidParams = -32602
	codeInternalError = -32603
	// codeNotFound is ACP's "resource not found", for a session id the
	// connection does not know.
	codeNotFound = -32002
)

// invalidParams is a -32602 error whose message carries the prefix clients
// show ("Invalid params: ..."), as the reference SDK words it.
func invalidParams(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: codeInvalidParams, Message: "Invalid params: " + fmt.Sprintf(format, args...)}
}

// internalError is a -32603 error with the "Internal error: " prefix.
func internalError(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: codeInternalError, Message: "Internal error: " + fmt.Sprintf(format, args...)}
}

// notFound is a -32002 error: ACP's answer to a request naming a session
// (or another resource) that does not exist.
func notFound(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: codeNotFound, Message: "Resource not found: " + fmt.Sprintf(format, args...)}
}
