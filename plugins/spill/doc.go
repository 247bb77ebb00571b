// Package spill is the generic oversized-result spill policy and its local
// store: a post-execute hook that moves a tool result larger than
// plugins.spill.max_inline_bytes into a private file and shows the model a
// head/tail preview with a notice naming that file, which the model reads
// back with read or grep.
//
// Invariants: the store creates 0700 directories and 0600 files with
// exclusive create; results of read are never spilled; a spill failure never
// turns a successful result into an error. Off by default, mounted when
// plugins.spill.enabled is set. It depends on host packages only;
// compositions mount it.
package spill
