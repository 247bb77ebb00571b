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
// Any host package may import session; session imports only host (for its
// service key), host/hook and uniseg (grapheme-safe title cuts).
package session
