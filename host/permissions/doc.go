// Package permissions decides which tool calls run, which are refused and
// which need a human's approval, from the permission mode and the call's
// effect and paths.
//
// Modes: default (reads and searches inside the workspace run; write, edit
// and bash ask), accept-edits (file changes inside the workspace run too;
// bash asks), read-only (everything but reading, searching and session state
// is refused), auto (file changes inside the workspace run, and so do
// commands of tools marked Sandboxed, which the decision tells to run in the
// operating-system sandbox through Call.Sandbox; a command the sandbox
// denied may run again outside it only after Sandbox.Escalate asked the
// approver; without a sandbox (see UseSandbox) commands ask, saying why),
// bypass (everything runs, unsandboxed). In every mode but bypass a call
// touching a path outside the session's workspace (a regular file inside it
// with more than one hard link counts as outside) asks, whatever its effect;
// tools with EffectState (todo_write) always run. Protected paths ask in
// every mode but bypass, even inside the workspace, and no "allow always"
// answer covers them: a change under a .dsh or .git directory (dsh's project
// config can turn approvals off for later starts; git config and hooks run
// code), and a read or change of dsh's own data (Service.Protect: its home,
// session logs and index), including a read of a folder that contains it. A call's paths are the
// locations its definition's PresentCall reports, so a tool opts in to path
// checks by presenting its paths, which it does for front ends anyway.
//
// What is decided is also what the tool may open: the decision carries a
// confine.Access (each path confined beneath the workspace or a trusted
// root, or an approved outside path pinned to the file it named when asked)
// that the pipeline hands the tool as Call.Access.
//
// The policy runs as the first tools.Registry PreExecute middleware. When it
// needs approval it asks the registry's Approver itself, so that an "allow
// always" answer is remembered for that session and tool (scoped to inside
// the workspace unless it was given for a path outside it). Without an
// approver (headless) an ask is a denial that says how to change the mode.
// Denials and approver failures become tool error results, never crashes;
// an approval cut short by the turn's cancellation becomes the pipeline's
// ordinary abort.
//
// A Service holds the configured default mode, per-session overrides (set by
// front ends: ACP session/set_mode, the TUI /mode command) and grants, all in
// memory and owned by one plugin activation.
package permissions
