package tools

import (
	"context"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Finish runs the ordered tail of one call: post-execute, the cancellation
// check, the definition's FinalizeContent, and the Results observers. The
// agent loop calls it in model order. A Ready call that was never dispatched
// finishes as aborted before dispatch. Calling Finish again returns the same
// result without re-running anything.
//
// The cancellation check runs before FinalizeContent so that the finalizer
// sees, and may reshape, the outcome the model will actually read.
func (r *Registry) Finish(ctx context.Context, p *Prepared) Result {
	switch p.stage {
	case stageDone:
		return p.result
	case stageDispatch:
		p.settle(stageFinal, aborted(false, nil))
	}
	res := p.result
	if p.stage == stagePost {
		res = r.postExecute(ctx, p, res)
	}
	if ctx.Err() != nil && !res.IsError {
		res = aborted(p.bodyStarted.Load(), &res)
	}
	res = normalized(r.finalize(p, res))
	p.settle(stageDone, res)
	call := p.call
	r.Results.Emit(Completed{Call: call, Result: res}, func(v any) {
		r.log.Error("tool result observer panicked", "tool", call.Name, "callId", call.CallID, "panic", v)
	})
	return res
}

func accept(context.Context, PostInput) PostDecision { return PostDecision{Kind: Accept} }

func (r *Registry) postExecute(ctx context.Context, p *Prepared, res Result) Result {
	var dec PostDecision
	if failed, ok := r.contain("post-execute hook", CodeHookPanic, p.call, func() {
		dec = r.PostExecute.Run(ctx, PostInput{Call: p.call, Result: res}, accept)
	}); !ok {
		failed.Mutations = res.Mutations
		return failed
	}
	switch dec.Kind {
	case Accept:
		return r.applyAccept(p, res, dec)
	case Block:
		feedback := dec.Feedback
		if feedback == "" {
			feedback = fmt.Sprintf("the result of tool %q was blocked by policy", p.call.Name)
		}
		// Contexts the body deferred belong to the outcome being blocked;
		// only what the blocking decision supplies survives.
		out := failure(feedback, NameBlocked, CodeBlocked)
		out.AdditionalContexts = dec.AdditionalContexts
		out.Mutations = res.Mutations
		return out
	default:
		out := invalidDecision(fmt.Sprintf("post-execute returned the unknown decision %q for tool %q", dec.Kind, p.call.Name))
		out.Mutations = res.Mutations
		return out
	}
}

func (r *Registry) applyAccept(p *Prepared, res Result, dec PostDecision) Result {
	contexts := res.AdditionalContexts
	if len(dec.AdditionalContexts) > 0 {
		contexts = append(append([]session.Message(nil), contexts...), dec.AdditionalContexts...)
	}
	if !dec.ReplaceValue {
		if dec.Content != nil {
			res.Content = dec.Content
		}
		res.AdditionalContexts = contexts
		return res
	}
	var out Result
	switch {
	case dec.Content != nil:
		out = invalidDecision(fmt.Sprintf("post-execute for tool %q replaced both the value and the content; replace one", p.call.Name))
	case res.IsError:
		out = invalidDecision(fmt.Sprintf("post-execute for tool %q replaced the value of a failed result", p.call.Name))
	default:
		out = r.success(p, dec.Value)
		out.Meta = res.Meta
		out.ConcludesTurn = res.ConcludesTurn && !out.IsError
	}
	out.AdditionalContexts = contexts
	out.Mutations = res.Mutations
	return out
}

// finalize applies the definition's FinalizeContent once; nil keeps the
// content.
func (r *Registry) finalize(p *Prepared, res Result) Result {
	if p.entry == nil || p.entry.def.FinalizeContent == nil {
		return res
	}
	var content []session.ContentBlock
	if failed, ok := r.contain("content finalizer", CodeToolPanic, p.call, func() {
		content = p.entry.def.FinalizeContent(p.call, res)
	}); !ok {
		failed.Mutations = res.Mutations
		return failed
	}
	if content != nil {
		res.Content = content
	}
	return res
}
