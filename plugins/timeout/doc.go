// Package timeout is the generic tool-call timeout policy: a plugin that
// gives each tool call a cooperative deadline from the tool's own declared
// budget and, when the budget runs out, replaces the result with
// "Error: tool call timed out after <ms>ms" and code TOOL_TIMEOUT.
//
// Invariants: tools never implement their own deadline handling; a tool
// without a budget runs unbounded. Off by default, mounted when
// plugins.timeout.enabled is set. It depends on host packages only;
// compositions mount it.
package timeout
