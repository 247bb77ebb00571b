// Package sandbox runs a command under an operating-system sandbox that
// lets it read almost everything, write only where its policy says and
// reach no network unless allowed, while dsh's own process stays
// unrestricted.
//
// On Linux the sandbox is Landlock. dsh cannot restrict a child between
// fork and exec from Go, so it re-executes itself as a small launcher
// (LauncherArg, handled by MaybeLaunch at the very top of main, before any
// other start-up work): the launcher builds the Landlock ruleset from the
// Policy, restricts itself, reports what it enforced on a private pipe, and
// execs the command. A launcher that cannot enforce at least what the
// parent was promised exits without running the command (fail closed).
//
// Landlock only allows: it cannot deny a path beneath an allowed tree. A
// Policy's "everything but" rules are therefore composed by walking down to
// each excluded path and allowing each sibling along the way, as it exists
// when the command starts (Plan). What follows from that, and what Landlock
// cannot restrict at all, is in Support.Limits and the README.
//
// Other platforms have no implementation yet (a Seatbelt profile on macOS
// would implement Sandbox); Detect then reports the sandbox unavailable and
// callers must not claim it. No package-level mutable state; the launcher
// runs in its own process.
//
// Callers: host/codingtools (bash), host/permissions (auto mode asks
// whether a sandbox is available), compositions and cmd/dsh (wiring and
// dsh doctor).
package sandbox
