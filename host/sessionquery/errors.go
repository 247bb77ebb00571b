package sessionquery

import "fmt"

// Error codes (a closed set).
const (
	CodeAborted           = "SESSION_QUERY_ABORTED"
	CodeCorruptSession    = "SESSION_QUERY_CORRUPT_SESSION"
	CodeEventNotFound     = "SESSION_QUERY_EVENT_NOT_FOUND"
	CodeIndexFailed       = "SESSION_QUERY_INDEX_FAILED"
	CodeInvalidConfig     = "SESSION_QUERY_INVALID_CONFIG"
	CodeInvalidCursor     = "SESSION_QUERY_INVALID_CURSOR"
	CodeInvalidFilter     = "SESSION_QUERY_INVALID_FILTER"
	CodeInvalidLimit      = "SESSION_QUERY_INVALID_LIMIT"
	CodeInvalidQuery      = "SESSION_QUERY_INVALID_QUERY"
	CodeInvalidLineage    = "SESSION_QUERY_INVALID_LINEAGE"
	CodeInvalidSurface    = "SESSION_QUERY_INVALID_SURFACE"
	CodeInvalidWindow     = "SESSION_QUERY_INVALID_WINDOW"
	CodePersistenceFailed = "SESSION_QUERY_PERSISTENCE_FAILED"
	CodeSearchDisabled    = "SESSION_QUERY_SEARCH_DISABLED"
	CodeSessionNotFound   = "SESSION_QUERY_SESSION_NOT_FOUND"
	CodeStaleCursor       = "SESSION_QUERY_STALE_CURSOR"
	CodeSourceConflict    = "SESSION_QUERY_SOURCE_CONFLICT"
)

// Codes lists the closed set of service error codes.
var Codes = []string{
	CodeAborted, CodeCorruptSession, CodeEventNotFound, CodeIndexFailed,
	CodeInvalidConfig, CodeInvalidCursor, CodeInvalidFilter, CodeInvalidLimit,
	CodeInvalidQuery, CodeInvalidLineage, CodeInvalidSurface, CodeInvalidWindow,
	CodePersistenceFailed, CodeSearchDisabled, CodeSessionNotFound,
	CodeStaleCursor, CodeSourceConflict,
}

// Error is a typed session-query failure. Match it with errors.As and branch
// on Code; Cause keeps the underlying error chain.
type Error struct {
	Code    string
	Message string
	Cause   error
}

func (e *Error) Error() string     { return e.Message }
func (e *Error) Unwrap() error     { return e.Cause }
func (e *Error) ErrorCode() string { return e.Code }
func (e *Error) ErrorName() string { return "SessionQueryError" }

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with a cause.
func Wrap(code string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: cause}
}
