// Package spill is the generic oversized-result spill policy (plugin
// spill-policy) and its local store. A prepended post-execute middleware
// lets every other post-execute handler settle first, then bounds the
// accepted text content of a call: when it is larger than
// plugins.spill.max_inline_bytes, the full text goes to a private file and
// the model sees a head/tail preview followed by a notice naming the file,
// which it reads back with read or grep.
//
// Invariants: the replacement never exceeds the cap (if even the notice does
// not fit, the original stays inline); byte cuts never split a UTF-8
// sequence and the notice counts the bytes actually dropped; results of
// read, nested calls, value replacements, blocks and non-text content pass
// through untouched; a spill failure only logs a warning and never turns a
// success into an error or hides content. The local store writes under one
// root, in a per-session 0700 directory, with exclusive 0600 creates that
// never follow a symbolic link, and file names that no tool name can turn
// into a path; before each save it applies the retention rule bash's saved
// output follows (outputdir.Retention: keep_days, keep_total_bytes).
//
// Compositions mount the plugin when plugins.spill.enabled is set; it
// depends on host packages only. Its section is declared once, as
// ConfigSchema, and checked by host/config in every layer, so a negative or
// fractional cap is a config error naming plugins.spill.max_inline_bytes
// and its source (the design's "maxInlineBytes must be a non-negative
// integer"). Where the design registers nothing when the cap is omitted,
// dsh always has one (configs/default.yaml: 50000) and enabled is the
// switch. Other code may use Policy and LocalStore directly, for example
// to bound a durable copy with another store; Policy.BoundDispatchCopy is
// the design's second arm, bounding the logged copy of a nested (Code
// Mode) sub-call's result, for a composition that mounts such a runtime
// (dsh has none yet).
package spill
