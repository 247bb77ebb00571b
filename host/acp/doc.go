// Package acp is dsh's Agent Client Protocol front end: an ACP agent, built on
// github.com/coder/acp-go-sdk, that serves editors (Zed and other ACP
// clients) over newline-delimited JSON-RPC on a reader and a writer.
//
// It maps the protocol onto the host: session/new, session/load (which
// replays the persisted conversation before answering), session/resume and
// session/close onto the composition's agents; session/list onto the
// session-query service; session/prompt onto Agent.Followup, streaming the
// session's events as they are appended (text and reasoning deltas, tool
// calls and results, plans, titles, retry notices); session/request_permission
// onto the tool registry's approver; permission modes and the model onto
// modes and configOptions. Slash commands (available_commands_update after
// session/new, load and resume) run in dsh instead of reaching the model;
// usage_update reports context use after each model step. A client that
// offers its file system serves the text of workspace files to read, write
// and edit (clientfs.go); one that offers terminals runs bash commands in
// them (clientterm.go); both are installed per call as codingtools.Files
// and codingtools.Runner, so the tools do not know which they use.
//
// Invariants: the writer carries protocol frames only; updates of a session
// are written in log order by one goroutine the session owns, and a prompt is
// answered only after its agent is idle and every update of the turn was
// written; a cancelled prompt answers stopReason "cancelled" and its final
// updates are still delivered; bad input (frames that are not JSON, oversized
// lines, unknown methods, invalid params) gets a JSON-RPC error and the
// connection lives on; the end of the input closes every session, flushing
// its log.
//
// A prompt answers by how its turn ended: completed or blocked is end_turn;
// max-tokens is max_tokens (Zed tells the user the reply was cut, where
// end_turn would hide it); a provider content-filter stop is refusal; a turn cancelled by the client, interrupted or
// disposed, or a prompt dropped before its turn began, is cancelled; a
// failed turn is the JSON-RPC error "Internal error: turn failed: <message>"
// with the failure code in its data.
//
// Start-up: initialize is answered as soon as the connection runs; the
// Backend (the Sessions factory, the session Catalog, the tool registry,
// the permissions service, the model catalog) is built meanwhile, on a
// goroutine Serve owns, and every other request waits for it, except
// session/list once the build has served the Catalog (Early.ServeCatalog:
// the editor's history needs only the session-query service, not the
// plugins started after it). A failed build is the answer of those
// requests; the input ending cancels a build no request waits for, and
// Serve returns only after the build did.
//
// The package never imports compositions: a composition hands it what it
// needs through Options and the Backend it builds. cmd/dsh reaches it
// through compositions.
package acp
