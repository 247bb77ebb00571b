// Package codingtools is the default coding tool roster: read, write, edit,
// bash, glob, grep and todo_write, plus the system-prompt guidance for them
// and the coding-tools host plugin that registers both.
//
// A Set owns everything the tools share for one plugin activation: the
// decoded config, the per-session record of which files the model has read
// (so write and edit can refuse to clobber a file the model has not seen, or
// one that changed on disk since), and the private per-session directories
// where bash keeps the full text of oversized output (each readable unasked
// by its own session only; one command saves at most
// tools.bash.saved_output.max_bytes, and the outputdir retention rule,
// shared with the spill plugin, removes old files). edit and write refuse
// files over tools.max_file_bytes. There is no package-level state; two
// activations never see each other's records.
//
// Paths in arguments may be absolute or relative to the calling session's
// working directory (Call.Cwd). Results name files relative to that directory
// when they are inside it and absolute otherwise, so that a path shown in one
// result can be passed back to any tool.
//
// Every file a tool touches is opened through the call's confine.Access
// (Call.Access.FS), and its checks, reads and writes use that one handle:
// never a second open by name. A nil Access (no permission policy) opens
// paths as given. read, write and edit reach file content through Files:
// DiskFiles (that Access) unless the front end installed another for the
// call with WithFiles (an ACP editor's buffers); grep and glob always read
// the disk.
//
// bash runs its command through a Runner: the local one (a process group of
// dsh's own) unless the front end installed another for the call with
// WithRunner (an ACP editor's terminals). Either way the command gets the
// environment tools.bash.env allows, minus dsh's credentials, and the result
// reads the same.
//
// Only the tool pipeline (tools.Registry) calls the definitions; tests call
// Execute directly. read, glob and grep are concurrency-safe; the others are
// exclusive.
package codingtools
