// Package mcp connects a session to Model Context Protocol servers and turns
// their tools into session tools of the tool registry, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// A Manager owns one session's servers: it starts them in parallel in the
// background (Start returns at once), lists their tools page by page,
// follows notifications/tools/list_changed, and registers each tool as
// mcp__<server>__<tool> (sanitized, at most 64 characters, collisions
// broken by a hash of the original names) scoped to the session, with the
// server's input schema passed through after validation. Calls carry a
// progress token, honour the call's context (a cancelled turn sends
// notifications/cancelled) and run under the manager's call timeout; their
// text, image and resource results become text the model reads.
//
// Failure is reported, never fatal: a server that cannot start, crashes,
// hangs or speaks garbage becomes a Status with the reason and the tail of
// its stderr, sent to Options.OnStatus, and the session keeps its other
// tools. A crashed server is restarted once, on the next call of one of its
// tools; a second crash removes its tools.
//
// Stdio servers run in their own session and process group, guarded by
// host/procgroup so the group dies with dsh even on SIGKILL, get only a
// small safe environment plus their configured variables (never dsh's API
// keys), and are killed with their group when the manager closes. Server entries run programs and send
// headers: callers take them only from the user's own config, profiles,
// flags or the editor (ACP), never from a project's files.
//
// Callers: compositions (one manager per session) and front ends through
// Status. A Manager's methods are safe for concurrent use.
package mcp
