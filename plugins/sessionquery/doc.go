// Package sessionquery is the opt-in, model-facing session-query plugin. It
// registers the five read-only tools session_search, session_event_search,
// session_trace, session_event_trace and session_event_read, and the
// tool:session-query system prompt section (order 113), over the trusted
// host/sessionquery service.
//
// Invariants: every result is scoped to the caller's workspace and passes
// through the error sanitizer; the search tools are exclusive and the trace
// and read tools concurrency-safe; results are cursorless, paged internally up
// to plugins.session_query.max_search_results. The plugin is off by default
// and mounted only when plugins.session_query.enabled is set (the
// session-query profile). It depends on host packages only; compositions
// mount it.
package sessionquery
