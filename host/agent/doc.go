// Package agent is the agent loop: one driver goroutine per session that turns
// queued user messages into turns and steps, builds every model request from
// the session log, streams the model's chunks into the log, schedules the tool
// calls a step asks for, and compacts the conversation when it outgrows the
// model's context window.
//
// Invariants the loop keeps in the log (host.md §2):
//
//   - every turn/start has a turn/end and every step/start a step/end, also on
//     errors and cancellation;
//   - a request is reconstructable from the log alone: the latest
//     request/header (written as "initial", "resume" or "change", never when
//     unchanged) plus session.DeriveMessages of the events before the request;
//   - everything appended is flushed to stable storage (Live.Flush) before each
//     model request and before each tool that is not read-only;
//   - tool results are committed in model order, each citing its tool/call,
//     and every tool/call has a tool/result, including calls that were never
//     started because the turn was cancelled;
//   - failed model attempts leave their chunks (ending in a finish chunk of
//     kind error or aborted) but never an assistant/message; a cancelled stream
//     that produced text keeps an assistant/message marked interrupted.
//
// Compaction is logged as compaction/start, the summary call's chunks as
// assistant/chunk events with step 0 (so the replay provider serves the call
// like any other), compaction/summary, a user/message replacing the
// summarized surface nodes (surfaceOp replace, citing every shadowed seq) and
// compaction/end; a failed compaction ends with compaction/end {error} and
// leaves the surface untouched. Front ends that stream assistant/chunk events
// should ignore chunks between compaction/start and compaction/end.
//
// The inbox (Followup, Steer) lives in memory: a prompt becomes durable when
// its turn enters it as a user/message. Cancel clears queued prompts unless
// the caller passes KeepQueued.
//
// Front ends (ACP, TUI, headless) create one Agent per live session and talk to
// it only through the exported methods, which are safe for concurrent use.
package agent
