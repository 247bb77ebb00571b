// Package replay is the keyless llm.Provider that serves model streams
// recorded in session logs, for snapshot tests and the demo profile.
//
// New reads each fixture (a session.jsonl, or a scenario directory holding
// session.jsonl and session.<n>.jsonl), groups its assistant/chunk events
// into one script entry per model call (split at terminal finish chunks;
// packed chunk rows are expanded), and orders the scripts primary first,
// then by header createdAt. An optional override file replaces or patches
// the primary script with scripted chunks, thrown failures or hangs.
//
// Scripts are served positionally per session: each live session (keyed by
// Request.SessionID) binds to the next unbound script on its first call and
// then consumes its entries in order, one stream at a time. Every mismatch
// fails loudly with an *llm.Error of code REPLAY — a missing fixture or an
// underivable script at New, an exhausted script or an unrecorded session at
// call time — and Check reports scripts left unbound or unconsumed for
// teardown assertions. A Provider is safe for concurrent use.
package replay
