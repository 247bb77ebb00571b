// Package procgroup starts a command as the leader of its own session and
// process group and makes the whole group die with this process, however this
// process ends: a normal exit, a crash, or SIGKILL from an editor or the OOM
// killer.
//
// The mechanism is a guard: Start runs the command through a short /bin/sh
// prologue that forks a watcher into the new group and then execs the
// command, so the command keeps the leader's pid and its exit status and
// signals are its own. The watcher ignores the usual termination signals and
// blocks reading one end of a socket pair whose other end only this process
// holds. When this process dies the kernel closes that end, the read sees end
// of file, and the watcher SIGKILLs its own process group. Because the watcher
// is a member, the group's id cannot be reused by an unrelated process while
// the guard stands, so the kill never reaches anything that is not ours.
//
// Why not PR_SET_PDEATHSIG: it reaches only the direct child (not `sleep &`
// started by a shell), is cleared on fork, and fires when the creating OS
// thread exits rather than the process. A subreaper does not help either: the
// subreaper is the process being killed.
//
// A Group is kept until nothing but its watcher is left (Release) or it is
// killed (Kill). A Tracker holds the groups whose leader has exited but whose
// background members still run, and kills them on Close. Processes that
// leave the group on purpose (setsid, setpgid) are not followed.
//
// Callers: host/codingtools (bash) and the MCP client for server processes.
// No package-level state; Unix only (the sh prologue and kill(-pgid)).
package procgroup
