// Package confine opens the files of one tool call so that the file finally
// opened is the one the permission policy allowed, whatever a concurrent
// process does to the directory tree meanwhile.
//
// The policy (host/permissions) turns each path a call presents into a
// Grant and hands the call an Access; a tool asks Access.FS for an FS and
// performs every stat, read, write and create of that call through it, on
// the handle it opened, never by name again:
//
//   - a path inside the workspace (or another root the session may use
//     freely, such as its own spill directory) is opened beneath that root
//     with os.Root, which follows symbolic links only while they stay inside
//     and refuses "..", absolute links and links leading out; a regular
//     file with more than one hard link is refused there, because another
//     name of it may be outside;
//   - a path outside that the user approved is pinned to the identity
//     (device and inode) it had when the approval was asked: the file, or
//     for a path that did not exist, its nearest existing ancestor directory,
//     beneath which the rest is created. A different file at that path is
//     refused with ErrReplaced;
//   - Unrestricted (bypass mode, or no policy mounted) opens paths as given.
//
// Every open is non-blocking (a FIFO cannot hang a tool) and close-on-exec.
// Resolve and Within are the lexical-plus-symlink path checks the policy
// decides with; they are advisory, the FS is what enforces.
//
// An Access is immutable and may be shared; an FS belongs to one call and
// must be closed by it.
package confine
