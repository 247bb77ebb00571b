package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// ServiceKey is the host service holding the tool registry.
var ServiceKey = host.NewKey[*Registry]("tools")

// Effect classifies what a tool does to the world; permissions and the
// durability barrier ("flush before a side effect") use it.
type Effect int

const (
	// EffectUnspecified is the zero value: a definition that does not say
	// what it does is treated like EffectExecute (it asks for approval and
	// is preceded by a durability barrier), never as harmless.
	EffectUnspecified Effect = iota
	// EffectRead tools only observe (read, glob, grep, session queries).
	EffectRead
	// EffectWrite tools change files (write, edit).
	EffectWrite
	// EffectExecute tools run arbitrary commands (bash).
	EffectExecute
	// EffectState tools change only session state (todo_write).
	EffectState
)

// Location is where in a session a call happens.
type Location struct {
	Turn int
	Step int
}

// Call is one tool execution request. It is immutable once the pipeline has
// started; cancellation travels in the context, never in Call.
type Call struct {
	CallID string
	Name   string
	// Arguments is the raw argument string produced by the model.
	Arguments string
	// Args is the parsed argument JSON: "{}" for an empty argument string,
	// the raw text when it is not valid JSON (validation then reports it).
	Args     json.RawMessage
	Location Location
	// Session is the calling agent's live session; nil means no agent.
	Session *session.Live
	// Cwd is the calling session's workspace ("" when it has none).
	Cwd string
	// Parent is set for nested dispatches.
	Parent *Call
	// Access is how the call may reach the files it presents, as the
	// permission policy granted them in pre-execute; tools open files only
	// through Access.FS. nil means no policy confined the call.
	Access *confine.Access
	// Sandbox, when set, tells a tool with Definition.Sandboxed to run its
	// command in the operating-system sandbox, as the permission policy
	// decided; nil runs it unsandboxed.
	Sandbox *Sandbox
}

// Sandbox is the pre-execute decision that a command runs sandboxed.
type Sandbox struct {
	// Escalate asks the user whether call, which ran sandboxed and was
	// denied something, may run again outside the sandbox; why says what
	// was denied, for the question. An approver sees a call with Sandbox
	// set, so it can word the question as such. nil means nobody can be
	// asked, so the denial stands.
	Escalate func(ctx context.Context, call *Call, why string) (bool, error)
}

// Decode unmarshals the (validated) arguments into v.
func (c *Call) Decode(v any) error { return json.Unmarshal(c.Args, v) }

// Output describes a tool's canonical value and how it renders to content.
type Output struct {
	// Schema is the JSON schema of the canonical value, e.g. {"type":"string"}.
	Schema json.RawMessage
	// Render turns the canonical value into model-visible content.
	Render func(call *Call, value any) []session.ContentBlock
}

// StringOutput is the output of tools whose value is one string rendered as
// one text block.
var StringOutput = Output{
	Schema: json.RawMessage(`{"type":"string"}`),
	Render: func(_ *Call, value any) []session.ContentBlock {
		s, _ := value.(string)
		return []session.ContentBlock{session.TextBlock(s)}
	},
}

// Definition is a tool. Only Name, Description and Parameters ever reach a
// model request.
type Definition struct {
	Name        string
	Description string
	Parameters  *ObjectSchema
	// RawParameters, when set, is a parameter schema written elsewhere (an
	// MCP server's inputSchema): requests carry it byte for byte instead of
	// Parameters, which must then be nil, and ValidateArgs checks the
	// arguments. The producer has validated it.
	RawParameters json.RawMessage
	// ValidateArgs replaces Parameters.Validate for a definition with
	// RawParameters; it returns one message per violation.
	ValidateArgs func(args json.RawMessage) []string
	// Session, when set, scopes the tool to one session: only that
	// session's requests list it and only its calls reach it. Session tools
	// come and go with what the session connects (its MCP servers).
	Session string
	Output  Output
	Effect  Effect
	// Sandboxed marks an execute tool that runs its command in the
	// operating-system sandbox when the call carries a Sandbox; a policy
	// may let such calls run unasked.
	Sandboxed bool
	// Execute runs the tool. It must honour ctx and return once it is done;
	// the pipeline never abandons a started body.
	Execute func(ctx context.Context, call *Call) (any, error)
	// Timeout is the tool's cooperative budget, enforced by a timeout policy
	// when one is mounted. Zero means none.
	Timeout time.Duration
	// ConcurrencySafe classifies one call; only an exact true runs it in
	// parallel with its neighbours. Nil means exclusive.
	ConcurrencySafe func(call *Call) bool
	// FinalizeContent may replace the content of every outcome, once.
	FinalizeContent func(call *Call, res Result) []session.ContentBlock
	// PresentCall and PresentResult describe the call for front ends.
	PresentCall   func(call *Call) *CallView
	PresentResult func(call *Call, res Result) *ResultView
	// LoggedDiff is the change a call that succeeded made, told from its
	// arguments alone (the disk has moved on since), for front ends that
	// replay a logged session. Nil means the tool changes no file.
	LoggedDiff func(call *Call) *Diff
}

// Schema is what a request carries for one tool.
type Schema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ErrorInfo is the structured part of a tool error; only Name and Code are
// persisted.
type ErrorInfo struct {
	Message string
	Name    string
	Code    string
}

// Result is the outcome of one call.
type Result struct {
	IsError bool
	// Value is the canonical value; it is execution-local and never persisted.
	Value   any
	Content []session.ContentBlock
	Error   *ErrorInfo
	Meta    json.RawMessage
	// AdditionalContexts become next-step user messages.
	AdditionalContexts []session.Message
	Mutations          json.RawMessage
	ConcludesTurn      bool

	// origin is the dispatch token of the base dispatch that produced this
	// result; a result authored by an execute wrapper has none and is
	// normalized through the tool's output contract.
	origin uint64
}

// Coded is implemented by errors that carry a stable code (and a name) for
// tool results, e.g. INVALID_ARGS or SESSION_QUERY_TOOL_UNAUTHORIZED.
type Coded interface {
	error
	ErrorCode() string
	ErrorName() string
}

// Error is a tool error with a code.
type Error struct {
	Name    string
	Code    string
	Message string
}

func (e *Error) Error() string     { return e.Message }
func (e *Error) ErrorCode() string { return e.Code }
func (e *Error) ErrorName() string { return e.Name }

// Pre-execute decision kinds.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
)

// PreDecision is the outcome of the pre-execute stage.
type PreDecision struct {
	Kind   string
	Reason string
	// Access, on an allowed (or approved) call, becomes the Call.Access the
	// tool executes with.
	Access *confine.Access
	// Sandbox, on an allowed call, becomes the Call.Sandbox.
	Sandbox *Sandbox
}

// Post-execute decision kinds.
const (
	Accept = "accept"
	Block  = "block"
)

// PostInput is what post-execute middlewares see.
type PostInput struct {
	Call   *Call
	Result Result
}

// PostDecision is the outcome of the post-execute stage. For accept, a
// non-nil Content replaces the content; ReplaceValue replaces the canonical
// value (revalidated and re-rendered); the two are exclusive. For block,
// Feedback becomes an error result.
type PostDecision struct {
	Kind               string
	Content            []session.ContentBlock
	ReplaceValue       bool
	Value              any
	Feedback           string
	AdditionalContexts []session.Message
}

// Approval outcomes.
const (
	AllowedOnce   = "allowed-once"
	AllowedAlways = "allowed-always"
	Rejected      = "rejected"
	Cancelled     = "cancelled"
)

// Approver answers "ask" decisions (the ACP client, a TUI dialog, or a
// headless policy). A failure is treated as a rejection.
type Approver interface {
	Approve(ctx context.Context, call *Call, reason string) (string, error)
}

// Completed is emitted to result observers after every call.
type Completed struct {
	Call   *Call
	Result Result
}

// Tool call kinds for front ends (ACP tool kinds).
const (
	KindRead    = "read"
	KindEdit    = "edit"
	KindDelete  = "delete"
	KindMove    = "move"
	KindSearch  = "search"
	KindExecute = "execute"
	KindThink   = "think"
	KindFetch   = "fetch"
	KindOther   = "other"
)

// FileLocation is a file (and optional 1-based line) a call touches.
type FileLocation struct {
	Path string
	Line int
}

// Diff is a file change for display.
type Diff struct {
	Path    string
	OldText *string
	NewText string
}

// CallView is a front end's card for a pending call.
type CallView struct {
	Kind      string
	Title     string
	Locations []FileLocation
	// RawInput is shown as the call's input (any JSON-encodable value).
	RawInput any
	Diff     *Diff
}

// ResultView is a front end's card for a completed call. Nil fields fall back
// to the result content.
type ResultView struct {
	Title   string
	Content []session.ContentBlock
	Diff    *Diff
}
