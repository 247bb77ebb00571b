package codingtools

import (
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Error codes of coding tool failures. They reach the durable tool/result as
// error.code; the message is the model-facing text.
const (
	CodeInvalidArgs      = "INVALID_ARGS"
	CodeNoWorkspace      = "NO_WORKSPACE"
	CodeNotFound         = "FILE_NOT_FOUND"
	CodeIsDirectory      = "IS_DIRECTORY"
	CodeNotRegular       = "NOT_REGULAR_FILE"
	CodeBinary           = "BINARY_FILE"
	CodeOffsetOutOfRange = "OFFSET_OUT_OF_RANGE"
	CodeNotRead          = "FILE_NOT_READ"
	CodeChangedOnDisk    = "FILE_CHANGED_ON_DISK"
	CodeNoMatch          = "OLD_STRING_NOT_FOUND"
	CodeNotUnique        = "OLD_STRING_NOT_UNIQUE"
	CodeNoChange         = "NO_CHANGE"
	CodeInvalidPattern   = "INVALID_PATTERN"
	CodeIO               = "IO_ERROR"
	CodeStartFailed      = "START_FAILED"
	CodeNoSession        = "NO_SESSION"
	CodeOutsideWorkspace = "OUTSIDE_WORKSPACE"
	CodeTooLarge         = "FILE_TOO_LARGE"
	CodeSandbox          = "SANDBOX_UNAVAILABLE"
)

// failf returns a coded tool error; name identifies the tool family so the
// persisted {name, code} pair reads on its own.
func failf(name, code, format string, args ...any) error {
	return &tools.Error{Name: name, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error names, one per tool.
const (
	nameRead  = "ReadError"
	nameWrite = "WriteError"
	nameEdit  = "EditError"
	nameBash  = "BashError"
	nameGlob  = "GlobError"
	nameGrep  = "GrepError"
	nameTodo  = "TodoWriteError"
)
