package acp

import (
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// JSON-RPC error codes of handler errors.
const (
	codeInvalidParams = -32602
	codeInternalError = -32603
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
