// Package sandbox runs a command under an operating-system sandbox that
// lets it read almost everything, write only where its policy says and
// reach no network unless allowed, while dsh's own process stays
// unrestricted.
//
// On Linux the sandbox is Landlock, with a seccomp filter on socket
// creation when the network is off (seccomp_linux.go). dsh cannot restrict
// a child between fork and exec from Go, so it re-executes itself as a
// launcher (handled by MaybeLaunch at the very top of main, before any
// other start-up work) that builds the Landlock ruleset from the Policy and
// restricts itself. Starting a Go process costs milliseconds, so the
// launcher of a policy normally stays as a zygote (zygote_linux.go): it
// re-executes itself once restricted, so all of it is inside the sandbox,
// and forks each command of that policy on request over a private socket;
// commands keep their own stdio, session, exit status and death with dsh.
// A zygote is used only while its rules are the ones Plan builds now, and
// the zygotes are bounded (pool_linux.go); a command no zygote can take
// gets a fresh launcher (LauncherArg) that reports on a private pipe and
// execs it. A launcher that cannot enforce at least what the parent was
// promised runs nothing (fail closed).
//
// Landlock only allows: it cannot deny a path beneath an allowed tree. A
// Policy's "everything but" rules are therefore composed by walking down to
// each excluded path and allowing each sibling along the way, as it exists
// when the command starts (Plan). What follows from that, and what Landlock
// cannot restrict at all, is in Support.Limits and the README.
//
// Other platforms have no implementation yet (a Seatbelt profile on macOS
// would implement Sandbox); Detect then reports the sandbox unavailable and
// callers must not claim it. No package-level mutable state; the
// launchers run in their own processes, the zygotes are owned by the
// Sandbox that started them and stopped by its Close.
//
// Callers: host/codingtools (bash), host/permissions (auto mode asks
// whether a sandbox is available), compositions and cmd/dsh (wiring and
// dsh doctor).
package sandbox
