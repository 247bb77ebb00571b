// Package sessionquery is the opt-in, model-facing session-query plugin. It
// registers the five read-only tools session_search, session_event_search,
// session_trace, session_event_trace and session_event_read, and the
// tool:session-query system prompt section (order 113), over the trusted
// host/sessionquery service.
//
// The code follows the execution boundaries of one call: input.go and
// timestamp.go decode and validate arguments; access.go captures the caller
// (only from the call's live session) and authorizes targets, parents,
// titles and lineage; boundary.go wraps every service call and sanitizes its
// failures; operations.go holds the five algorithms; present.go renders.
//
// Invariants: a session other than the caller's is visible only when the
// caller has a workspace and the session's observed cwd is exactly one of
// its forms (session.Workspace: the caller's cwd as stored, cleaned, or with
// symbolic links resolved; the observed string gets no equivalence, as the
// design's cwd rule demands), and every header an observation carries is re-checked
// before its payload is used; a missing id and a foreign one are denied
// identically and no output names a hidden session. Trusted service errors
// never reach the model verbatim: they are logged in full through the host
// logger (never stdout) and replaced by a fixed error, while cancellation
// returns the context's cause untouched and unlogged, after the started
// service call settles. The search tools are exclusive and page internally
// up to plugins.session_query.max_search_results, exposing no cursor; the
// trace and read tools are concurrency-safe. Nothing is truncated here:
// bounding output is a spill policy's job.
//
// The plugin is off by default and mounted by a composition only when
// plugins.session_query.enabled is set (the session-query profile). Its
// section is declared once, as ConfigSchema, and checked by host/config in
// every layer; configs/default.yaml holds the defaults (100 hits, 30000 ms).
// It depends on host packages only.
//
// Deviation from the design, on purpose: a bad value is reported by the
// config loader under dsh's snake_case key and its source, e.g.
// config key "plugins.session_query.max_search_results" in flag --set ...
// must be an integer between 1 and 9007199254740991 (got 0), where the
// design's message names maxSearchResults and says "no greater than
// 2147483647" for the budget. dsh's config is snake_case in every file,
// variable (DSH_PLUGINS_SESSION_QUERY_MAX_SEARCH_RESULTS) and flag, so the
// message names the key the user can actually type; the bounds are the
// design's.
//
// testdata/acceptance.txt maps each acceptance behaviour of the design
// (session-query.md §7) to the Go tests that pin it, across this package,
// host/sessionquery, host/sessionquery/searchindex and host/session; a test keeps every
// name in it real.
package sessionquery
