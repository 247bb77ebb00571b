// Package store persists sessions as append-only JSONL logs under a sessions
// root: <root>/<workspace-slug>/<session-id>/session.jsonl, the session header
// on line 1 and one event per line after it. It owns durability (fsync at
// Flush), single-writer locking (an advisory flock per session, released when
// the process dies), crash repair (a torn last line is truncated and an open
// turn is closed as interrupted on Load and Open, never on Inspect or List;
// a model stream it cut off keeps its streamed text and reasoning as an
// interrupted assistant/message; InspectRecovered shows a crashed log with
// those closers before anyone resumes it, without writing them) and
// a change journal (<root>/changes.log) that tells readers which logs to look
// at again without stat-ing every one.
//
// Invariants: a log's lines are complete JSON values ending in a newline,
// except possibly a torn tail left by a crash or by a writer in progress;
// seq equals the event's index; every byte an Append acknowledged is in the
// file, and every byte a Flush acknowledged is on stable storage. Reading
// returns every event byte for byte as it was appended, although a long
// string that repeats a streamed block's deltas is stored once, as a
// deltaRefs reference to them (deltas.go), and packed chunk rows expand. Reads never
// drop a complete line silently: a bad line, or one over MaxEventBytes
// (streamed past, never held whole), is a CorruptError naming the file and
// line. A session.jsonl that is not a regular file (a directory, FIFO,
// socket or device) is a CorruptError too, found without blocking: logs are
// opened with O_NONBLOCK and checked with fstat before any read. List
// skips every such log with a warning, so one broken file never hides or
// hangs the others. The store validates JSON shape only; the surface fold belongs to
// the readers (host/session, host/sessionquery).
//
// The sessions config section (sessions.dir, the root New takes) is
// declared here, as ConfigSchema; compositions registers it and passes the
// loaded dir to New.
//
// Any host package or composition may use a Store. Writers are not shared
// between processes: the lock makes a second writer fail with LockedError,
// while List, Stat, Inspect and Changes may run concurrently with writers in
// this or any other process.
package store
