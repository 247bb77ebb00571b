// Package timeout is the generic tool-call timeout policy (plugin
// timeout-policy): every call of a tool that declares a budget
// (tools.Definition.Timeout) runs under a deadline derived from the caller's
// context, and a call whose deadline fired before it settled reports
// "Error: tool call timed out after <ms>ms" with code TOOL_TIMEOUT.
//
// Invariants: the policy is cooperative. It never abandons or kills a tool:
// it waits for the body to return, however late, and only then decides, from
// the cause of its own deadline, whether to replace the result. A caller
// cancellation that wins the race stays an ordinary abort, and a tool without
// a budget runs with the caller's context untouched. The deadline context is
// visible only inside the execute stage; post-execute and finalize never see
// it.
//
// Compositions mount the plugin when plugins.timeout.enabled is set; the
// switch is theirs, the plugin itself has no other config. Tools that want
// to tell a timeout from a cancellation call TimeoutOf on their context.
package timeout
