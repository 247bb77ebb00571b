// Package tools is the tool registry and the guarded execution pipeline:
// definitions with canonical parameter schemas, argument validation, and the
// stages pre-execute (allow / deny / ask), guards, execute (around-dispatch
// wrappers that may replace only the cancellation context), post-execute
// (accept / replace content or value / block), finalize and result observers.
//
// Most tools are seen by every session; a session tool (Definition.Session,
// e.g. one of the session's MCP servers) is listed in and reachable from
// that session only, and callers holding a call find definitions with For.
//
// Plugins register tools and middlewares and keep the removers for their
// disposer. The agent loop drives the pipeline through Prepare, Dispatch and
// Finish so that pre- and post-execute run in model order while only dispatch
// overlaps between parallel calls; everyone else calls Run.
//
// Invariants: every call ends in exactly one Result, emitted once to the
// Results observers; its Content is never nil and an error result always
// carries Error {message, name, code}. Nothing a tool or hook does (an error,
// a panic, a malformed decision) escapes as a panic or a hang: it becomes an
// error result with a stable code (see the Code constants). Arguments are
// validated before pre-execute, so policies only see well-formed calls.
// Cancellation of the caller's context before the body starts yields
// ABORTED_BEFORE_DISPATCH; after it started, only a successful outcome is
// replaced by ABORTED — denials, failures and timeouts keep their own result.
package tools
