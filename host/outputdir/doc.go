// Package outputdir keeps the directories where tools save full copies of
// output the model sees only part of: the bash tool's truncated output and
// the spill policy's oversized results. It provides their default location,
// one private directory per user below the system temp dir that every dsh
// process of that user shares (so nothing is left behind per process), and
// the one retention rule both apply to what they saved (Retention.Prune).
//
// Invariants: Default never returns a directory another user owns, can
// write or can redirect with a symbolic link. Prune removes only regular
// files directly inside the session-<12 hex> directories both stores
// create, and such directories once empty and old, through an os.Root, so a
// misconfigured root or a planted link never makes it delete anything else.
//
// Both stores also name their session directories with SessionDir and
// record the read trust each session was given with Trusts, so the naming
// Prune relies on and the give-once, withdraw-once trust rule are written
// once.
//
// Callers are host/codingtools (bash output, sandbox temp dirs) and
// plugins/spill; both run Prune before saving a new file. Only a Trusts,
// owned by the store that holds it, keeps state.
package outputdir
