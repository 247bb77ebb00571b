// Package tools is the tool registry and the guarded execution pipeline:
// definitions with canonical parameter schemas, argument validation, and the
// stages pre-execute (allow / deny / ask), guards, execute (around-dispatch
// wrappers that may replace only the cancellation context), post-execute
// (accept / replace content / block), finalize and result observers.
//
// Plugins register tools and middlewares and keep the removers for their
// disposer. The agent loop drives the pipeline through Prepare, Dispatch and
// Finish so that pre- and post-execute run in model order while only dispatch
// overlaps between parallel calls.
package tools
