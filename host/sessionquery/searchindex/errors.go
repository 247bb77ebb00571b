package searchindex

import (
	"context"
	"errors"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// Fixed messages of the provider's own failures (session-query.md §3).
const (
	msgAborted     = "session-search aborted"
	msgClosed      = "session-search SQLite index is closed"
	msgBadCursor   = "session-search cursor is invalid"
	msgStaleCursor = "session-search cursor is stale because its relevant corpus changed"
	msgPredicates  = "session-search request exceeds the supported SQLite FTS5 outer-predicate budget of 14; reduce filters"
	msgBindings    = "session-search request exceeds SQLite's portable 32766-variable limit; reduce filter values"
	msgNotStable   = "session-search persistence observation did not stabilize after one retry"
)

func aborted(ctx context.Context) error {
	return sessionquery.Wrap(sessionquery.CodeAborted, context.Cause(ctx), msgAborted)
}

// checkCtx returns ABORTED once ctx is done.
func checkCtx(ctx context.Context) error {
	if ctx.Err() != nil {
		return aborted(ctx)
	}
	return nil
}

func indexFailed(cause error, format string, args ...any) error {
	return sessionquery.Wrap(sessionquery.CodeIndexFailed, cause, format, args...)
}

func closedError() error {
	return sessionquery.Errorf(sessionquery.CodeIndexFailed, msgClosed)
}

func openFailed(err error) error {
	var qe *sessionquery.Error
	if errors.As(err, &qe) && qe.Code == sessionquery.CodeIndexFailed && strings.HasPrefix(qe.Message, "session-search SQLite index failed to open: ") {
		return err
	}
	return indexFailed(err, "session-search SQLite index failed to open: %s", detail(err))
}

func invalidCursor() error {
	return sessionquery.Errorf(sessionquery.CodeInvalidCursor, msgBadCursor)
}

func staleCursor() error {
	return sessionquery.Errorf(sessionquery.CodeStaleCursor, msgStaleCursor)
}

func invalidFilter(msg string) error {
	return sessionquery.Errorf(sessionquery.CodeInvalidFilter, "%s", msg)
}

// detail is an error's message for embedding in another one.
func detail(err error) string {
	if err == nil {
		return "session-search dependency rejected with a non-Error value"
	}
	if msg := err.Error(); msg != "" {
		return msg
	}
	return "unknown error"
}

// isQueryError reports whether err is already a typed session-query error,
// which reconciliation passes through unchanged.
func isQueryError(err error) bool {
	var qe *sessionquery.Error
	return errors.As(err, &qe)
}
