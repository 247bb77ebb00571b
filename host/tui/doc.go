// Package tui is dsh's terminal front end: one tview Application driving one
// agent session at a time in a terminal, with a streaming transcript, tool
// cards, approval dialogs, a status line and the human commands (/help,
// /new, /resume, /search, /fork, /compact, /model, /mode, /title, /exit).
//
// Invariants. Every change to the widgets happens on the tview event
// goroutine: session observers, the approver and background loads never
// touch a primitive; they hand closures to a poster whose single pump
// goroutine batches them into QueueUpdateDraw calls, so an observer never
// blocks the agent and a burst of stream deltas costs one draw. The
// transcript keeps a model of entries (user prompts, replies, reasoning,
// tool cards, notices) and lays out only the entries it draws, so a
// 10,000-event session opens and scrolls in time proportional to the
// screen, not to the log. Text from models, tools and logs is never
// interpreted: what host/termtext escapes (controls, escape sequences, bidi
// controls) is drawn as its visible escape (\x1b, \u202e) and
// tview colour tags are escaped wherever a tview widget prints it.
//
// The package depends only on host packages. A composition supplies what the
// UI needs through the small interfaces in Options (sessions, the
// session-query service, the tool registry, permissions, the model catalog)
// and calls Run from the goroutine that owns the terminal.
package tui
