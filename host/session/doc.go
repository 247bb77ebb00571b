// Package session is the event-sourced session model: the header, the event
// envelope and its payloads, the surface fold that validates a log and
// classifies each event (current, shadowed, log-only), replacement and source
// relations, the title fold, the derived model history, forking, and the live
// in-memory session with its registry.
//
// Invariants: seqs are contiguous from 0 (seq == index); only the surface
// types user/message, assistant/message and tool/result carry surfaceOp and
// sourceEventSeqs; JSON produced here keeps declaration key order and is never
// HTML-escaped (use Marshal, never encoding/json.Marshal, for anything that is
// persisted or pinned). Payload bytes travel as json.RawMessage so nothing is
// lost between read and write.
//
// Entry points: Fold (surface fold, classification and trace relations,
// errors are *FoldError), ValidateLog/ValidateHeader (what resume and the
// query service check before trusting a stored log), DeriveMessages (the
// model history a request is built from), FoldTitle and FallbackTitle, Fork
// and MarkEndSeed, Compatible and SameSnapshotHeader.
//
// Workspace identity is decided once, by ResolveWorkspace and
// Workspace.Holds; the session-query tools' access rule, the dsh sessions
// commands and their completion, ACP session/list, session/load and
// session/resume, and the TUI's /resume, /search and prompt history all
// use them, so they agree on which sessions are "here". The
// decision: the caller's path is canonicalized (made absolute, cleaned and,
// separately, resolved through symbolic links), while a session's stored cwd
// is compared as the exact string it is, against each of those forms
// (Forms, the values a cwd filter passes to the index). Resolving the stored
// string instead would let a log recorded through a link that now points
// elsewhere claim this workspace, and it cannot be done by the index's exact
// cwd filter; keeping it exact is the design's cwd rule (session-query.md
// §5.3). So trailing slashes, ".." steps and links in the caller's path do
// not matter, a log recorded through a link is seen by a caller entering
// through that link but not by one at the real path, case variants are
// distinct, and a renamed directory's old logs keep the old name. Sessions
// dsh creates store the cleaned path as given (Workspace.Given).
//
// Any host package may import session; session imports only host (for its
// service key), host/hook and uniseg (grapheme-safe title cuts).
package session
