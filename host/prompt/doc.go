// Package prompt assembles what the model is told outside the conversation:
// the system prompt, built from ordered named sections, and the runtime
// context snapshot, built from ordered named context parts and delivered as
// a user message so that the system prompt stays byte-stable (and cacheable)
// while the cwd, permission mode or date change. It also loads the project
// instructions file (AGENTS.md, else CLAUDE.md) as a user message.
//
// Invariants: sections render in ascending Order, ties in registration
// order; each is interpolated strictly ({{name}} must name a variable with a
// value); sections that render empty are dropped; the rest are joined with
// exactly "\n\n" and never trimmed, so a persona ending in a newline leaves
// two blank lines before the next section. Names are unique per kind.
//
// Plugins register sections and contexts through the Registry found under
// ServiceKey and remove them in their disposer; the agent loop renders the
// prompt and the snapshot once per step. A Registry is safe for concurrent
// use.
package prompt
