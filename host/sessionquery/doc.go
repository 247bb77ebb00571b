// Package sessionquery is the trusted session-query service: exact reads,
// provider-independent filters, lineage and event traces, and batched title
// reads over the logical corpus of this process's live sessions plus the
// persisted logs of whichever persistence backend is mounted at the moment of
// each call. Full-text search is delegated to a SearchEngine; the SQLite FTS
// provider and catalog is the subpackage searchindex, which builds on the
// exported extraction, whitespace, filter-validation and Binding helpers
// here. The service and its index are one tree: compositions mount both
// with searchindex.Mount, and nothing outside the tree reaches the index
// except the CLI's index administration (rebuild, verify, status).
//
// Invariants: a live session always wins over its persisted copy, and a read
// of a live id never consults persistence; persistence is only ever inspected
// (a non-mutating read), never loaded or repaired; every returned header,
// event and slice is a detached deep copy; a cancelled context makes no new
// backend call, a started backend call is always awaited, and the result of
// a cancelled read is then exactly context.Cause(ctx). The service performs
// no authorization: each consumer (the model-facing tools, ACP, the TUI, the
// CLI) scopes what it shows.
//
// Compositions construct the Service with New, mount the store through
// StorePersistence (the one store adapter, which also offers the change
// journal the index follows) and publish it under ServiceKey; any front end
// or plugin may call it concurrently.
package sessionquery
