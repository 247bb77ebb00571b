package tools

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Dispatch runs the Execute chain around the tool body. It is the only stage
// that may overlap between calls; it does nothing for a call that is not
// Ready. ctx is the caller's context: cancelling it reaches the body even
// when a wrapper runs the body under a context of its own.
func (r *Registry) Dispatch(ctx context.Context, p *Prepared) {
	if p.stage != stageDispatch {
		return
	}
	var res Result
	if failed, ok := r.contain("execute wrapper", CodeHookPanic, p.call, func() {
		// The chain's call argument is ignored at the base: a wrapper may
		// replace only the context, never the call.
		res = r.Execute.Run(ctx, p.call, func(inner context.Context, _ *Call) Result {
			return r.dispatchBody(ctx, inner, p)
		})
	}); !ok {
		p.settle(stageFinal, failed)
		return
	}
	res = r.normalizeDispatch(p, res)
	if ctx.Err() != nil && !res.IsError {
		res = aborted(p.bodyStarted.Load(), &res)
	}
	p.settle(stagePost, res)
}

// dispatchBody is the base of the Execute chain: run the body under the
// wrapper's context fused with the caller's, then validate and render.
func (r *Registry) dispatchBody(caller, inner context.Context, p *Prepared) Result {
	ctx, stop := fuse(caller, inner)
	defer stop()
	if ctx.Err() != nil {
		res := aborted(false, nil)
		res.origin = p.token
		return res
	}
	rec := &recorder{}
	p.bodyStarted.Store(true)
	value, err := r.invoke(context.WithValue(ctx, recorderKey{}, rec), p)
	var res Result
	if err != nil {
		res = bodyFailure(ctx, err)
	} else {
		res = r.success(p, value)
	}
	res = rec.apply(res)
	if ctx.Err() != nil && !res.IsError {
		res = aborted(true, &res)
	}
	res.origin = p.token
	return res
}

// fuse returns a context cancelled when either inner or caller is, so a
// wrapper that detaches its context cannot detach the caller's cancellation.
func fuse(caller, inner context.Context) (context.Context, func()) {
	if caller == inner {
		return inner, func() {}
	}
	ctx, cancel := context.WithCancelCause(inner)
	stopAfter := context.AfterFunc(caller, func() { cancel(context.Cause(caller)) })
	return ctx, func() {
		stopAfter()
		cancel(nil)
	}
}

func (r *Registry) invoke(ctx context.Context, p *Prepared) (value any, err error) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Error("tool panicked", "tool", p.call.Name, "callId", p.call.CallID, "panic", v, "stack", string(debug.Stack()))
			err = &Error{Name: NamePanic, Code: CodeToolPanic, Message: fmt.Sprintf("tool %q panicked: %v", p.call.Name, v)}
		}
	}()
	return p.entry.def.Execute(ctx, p.call)
}

// bodyFailure converts a body error. A bare context error while the body's
// context is done is a cancellation, not a tool failure; a coded error keeps
// its code (a timeout policy relies on replacing this afterwards).
func bodyFailure(ctx context.Context, err error) Result {
	var coded Coded
	if !errors.As(err, &coded) && ctx.Err() != nil &&
		(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
			errors.Is(err, context.Cause(ctx))) {
		// A body that gives up because its context ended reports the
		// context's error or its cause (context.Cause); either is an abort.
		return aborted(true, nil)
	}
	return ErrorResult(err)
}

// success validates value against the tool's output schema and renders it.
func (r *Registry) success(p *Prepared, value any) Result {
	name := p.call.Name
	if v := validateOutput(p.entry.output, value); len(v) > 0 {
		return invalidOutput(name, v)
	}
	var content []session.ContentBlock
	if failed, ok := r.contain("output renderer", CodeToolPanic, p.call, func() {
		content = p.entry.def.Output.Render(p.call, value)
	}); !ok {
		return failed
	}
	if content == nil {
		content = []session.ContentBlock{}
	}
	return Result{Value: value, Content: content}
}

// normalizeDispatch brings a wrapper-authored result under the same contract
// as the base's: errors get Error and content, successes are revalidated and
// re-rendered from their value.
func (r *Registry) normalizeDispatch(p *Prepared, res Result) Result {
	if res.origin == p.token || res.IsError {
		return normalized(res)
	}
	out := r.success(p, res.Value)
	out.AdditionalContexts = res.AdditionalContexts
	out.Meta = res.Meta
	out.Mutations = res.Mutations
	out.ConcludesTurn = res.ConcludesTurn && !out.IsError
	return out
}
