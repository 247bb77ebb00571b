package tools

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// Mode is how the scheduler may run one call relative to its neighbours.
type Mode int

const (
	// Exclusive calls run alone and order the calls around them.
	Exclusive Mode = iota
	// Parallel calls may overlap with neighbouring parallel calls.
	Parallel
)

func (m Mode) String() string {
	if m == Parallel {
		return "parallel"
	}
	return "exclusive"
}

type stage int

const (
	stageDispatch stage = iota // gate passed; waiting for Dispatch
	stagePost                  // has an outcome that post-execute still sees
	stageFinal                 // has an outcome that bypasses post-execute
	stageDone                  // finished; the result is final
)

// Prepared is one call between the stages of the pipeline. It is owned by
// the scheduler driving it: Dispatch and Finish must not run concurrently for
// the same Prepared, and Finish must come after Dispatch returns.
type Prepared struct {
	call  *Call
	entry *entry // nil for an unknown tool
	token uint64
	stage stage

	result      Result
	bodyStarted atomic.Bool // written by the dispatch goroutine a wrapper may own
}

// Call returns the call being executed (with Args filled in).
func (p *Prepared) Call() *Call { return p.call }

// Ready reports whether the call still needs Dispatch; false when it already
// has an outcome (unknown tool, invalid arguments, denial, abort).
func (p *Prepared) Ready() bool { return p.stage == stageDispatch }

func (p *Prepared) settle(s stage, r Result) *Prepared {
	p.stage, p.result = s, r
	return p
}

// Run executes one call through every stage and returns its final result.
func (r *Registry) Run(ctx context.Context, call *Call) Result {
	p := r.Prepare(ctx, call)
	r.Dispatch(ctx, p)
	return r.Finish(ctx, p)
}

// Prepare runs the ordered gate of one call: the pre-dispatch abort check,
// tool lookup, argument validation, pre-execute (with approval for "ask")
// and the guards. The agent loop calls it serially in model order.
//
// Arguments are validated before pre-execute so that policies and approvers
// only ever see well-formed calls: asking a human to approve a call that can
// only fail is noise, and a permission policy may decode the arguments.
func (r *Registry) Prepare(ctx context.Context, call *Call) *Prepared {
	call = withArgs(call)
	p := &Prepared{call: call, token: r.tokens.Add(1)}
	// The definition is captured before the abort check so that even a
	// pre-dispatch abort goes through its FinalizeContent.
	e, ok := r.lookup(callSession(call), call.Name)
	p.entry = e
	if ctx.Err() != nil {
		return p.settle(stageFinal, aborted(false, nil))
	}
	if !ok {
		return p.settle(stagePost, unknownTool(call.Name))
	}
	if v := e.def.validate(call.Args); len(v) > 0 {
		return p.settle(stagePost, invalidArgs(v))
	}
	return r.gate(ctx, p)
}

func allow(context.Context, *Call) PreDecision { return PreDecision{Kind: Allow} }

func (r *Registry) gate(ctx context.Context, p *Prepared) *Prepared {
	call := p.call
	var dec PreDecision
	if failed, ok := r.contain("pre-execute hook", CodeHookPanic, call, func() {
		dec = r.PreExecute.Run(ctx, call, allow)
	}); !ok {
		return p.settle(stageFinal, failed)
	}
	reason := ""
	switch dec.Kind {
	case Allow:
	case Deny:
		reason = dec.Reason
		if reason == "" {
			reason = fmt.Sprintf("tool %q was denied by policy", call.Name)
		}
	case Ask:
		var cancelled bool
		if failed, ok := r.contain("approver", CodeHookPanic, call, func() {
			reason, cancelled = r.ask(ctx, call, dec.Reason)
		}); !ok {
			return p.settle(stageFinal, failed)
		}
		if cancelled && ctx.Err() != nil {
			return p.settle(stagePost, aborted(false, nil))
		}
	default:
		reason = fmt.Sprintf("tool %q was denied: pre-execute returned the unknown decision %q", call.Name, dec.Kind)
	}
	if reason == "" {
		if failed, ok := r.contain("guard", CodeHookPanic, call, func() {
			reason = r.guardReason(ctx, call)
		}); !ok {
			return p.settle(stageFinal, failed)
		}
	}
	if reason != "" {
		return p.settle(stagePost, denied(reason))
	}
	if ctx.Err() != nil {
		return p.settle(stagePost, aborted(false, nil))
	}
	if dec.Access != nil || dec.Sandbox != nil {
		c := *call
		if dec.Access != nil {
			c.Access = dec.Access
		}
		if dec.Sandbox != nil {
			c.Sandbox = dec.Sandbox
		}
		p.call = &c
	}
	r.Cleared.Emit(p.call, func(v any) {
		r.log.Error("cleared-call observer panicked", "tool", call.Name, "callId", call.CallID, "panic", v)
	})
	return p
}

// ask services an "ask" decision. Anything but an explicit grant denies; the
// reasons differ so the model can tell a human "no" from a missing channel.
func (r *Registry) ask(ctx context.Context, call *Call, why string) (denial string, cancelled bool) {
	r.mu.RLock()
	a := r.approver
	r.mu.RUnlock()
	if a == nil {
		msg := fmt.Sprintf("tool %q requires approval", call.Name)
		if why != "" {
			msg += " (" + why + ")"
		}
		return msg + ", but no approval channel is available in this session; tell the user, who can change the permission mode", false
	}
	outcome, err := a.Approve(ctx, call, why)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Sprintf("approval for tool %q was cancelled", call.Name), true
		}
		return fmt.Sprintf("approval for tool %q failed: %v", call.Name, err), false
	}
	switch outcome {
	case AllowedOnce, AllowedAlways:
		return "", false
	case Rejected:
		return fmt.Sprintf("the user rejected tool %q; ask the user how to proceed instead of retrying it", call.Name), false
	case Cancelled:
		return fmt.Sprintf("approval for tool %q was cancelled", call.Name), true
	default:
		return fmt.Sprintf("approval for tool %q returned the unknown outcome %q", call.Name, outcome), false
	}
}

func (r *Registry) guardReason(ctx context.Context, call *Call) string {
	r.mu.RLock()
	guards := append([]guardEntry(nil), r.guards...)
	r.mu.RUnlock()
	for _, g := range guards {
		if reason := g.fn(ctx, call); reason != "" {
			return reason
		}
	}
	return ""
}

// contain runs fn, turning a panic into an error result with code so one
// broken hook fails its call instead of the agent. ok is false on panic.
func (r *Registry) contain(what, code string, call *Call, fn func()) (failed Result, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Error(what+" panicked", "tool", call.Name, "callId", call.CallID, "panic", v, "stack", string(debug.Stack()))
			failed = failure(fmt.Sprintf("%s panicked while handling tool %q: %v", what, call.Name, v), NamePanic, code)
			ok = false
		}
	}()
	fn()
	return Result{}, true
}

// ExecutionMode classifies a call for the scheduler: Parallel only when its
// definition's ConcurrencySafe returns exactly true for valid arguments. An
// unknown tool, a missing classifier, invalid arguments or a panicking
// classifier all mean Exclusive, the safe default.
func (r *Registry) ExecutionMode(call *Call) (mode Mode) {
	e, ok := r.lookup(callSession(call), call.Name)
	if !ok || e.def.ConcurrencySafe == nil {
		return Exclusive
	}
	call = withArgs(call)
	if len(e.def.validate(call.Args)) > 0 {
		return Exclusive
	}
	defer func() {
		if v := recover(); v != nil {
			r.log.Warn("concurrency classifier panicked; running the call exclusively", "tool", call.Name, "panic", v)
			mode = Exclusive
		}
	}()
	if e.def.ConcurrencySafe(call) {
		return Parallel
	}
	return Exclusive
}
