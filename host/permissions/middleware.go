package permissions

import (
	"context"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Install registers the policy as the first PreExecute middleware of the
// service's registry and returns its remover.
func (s *Service) Install() (remove func()) {
	return s.reg.PreExecute.Prepend(s.Middleware())
}

// Middleware is the PreExecute policy. It refuses what the mode forbids
// without consulting later middlewares, lets them veto what it allows, and
// resolves its own asks through the registry's approver so that "allow
// always" answers are remembered.
func (s *Service) Middleware() hook.Middleware[*tools.Call, tools.PreDecision] {
	return func(ctx context.Context, call *tools.Call, next hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
		def, ok := s.reg.For(call)
		if !ok {
			return next(ctx, call)
		}
		d := s.Decide(call, def)
		if d.Kind == tools.Deny {
			return tools.PreDecision{Kind: tools.Deny, Reason: d.Reason}
		}
		down := next(ctx, call)
		if down.Kind == tools.Deny {
			return down
		}
		if d.Kind != tools.Allow {
			down = s.approve(ctx, call, d, down)
		}
		// The tool opens exactly what was decided on: the workspace beneath
		// its root, approved outside files pinned to what was approved.
		down.Access = d.Access
		down.Sandbox = d.Sandbox
		return down
	}
}

// approve resolves an ask of the policy. down is what later middlewares
// decided; a human's approval covers their asks too.
func (s *Service) approve(ctx context.Context, call *tools.Call, d Decision, down tools.PreDecision) tools.PreDecision {
	sid := sessionID(call)
	outside := len(d.Outside) > 0
	if !d.Protected && s.granted(sid, call.Name, outside) {
		return down
	}
	mode := s.Mode(sid)
	a := s.reg.Approver()
	if a == nil {
		return deny("tool %q needs the user's approval (%s), but this session has no way to ask; do not retry it. Tell the user, who can allow such calls with a more permissive mode than %s (for example --set permissions.mode=%s)",
			call.Name, d.Reason, mode, suggestedMode(call, s, d))
	}
	outcome, err := a.Approve(ctx, call, d.Reason)
	if ctx.Err() != nil && (err != nil || outcome == tools.Cancelled) {
		// The turn is being cancelled: not a denial but an abort. The
		// pipeline checks ctx right after the gate and settles the call as
		// aborted before dispatch, so the tool never runs.
		return tools.PreDecision{Kind: tools.Allow}
	}
	switch {
	case err != nil:
		return deny("asking the user to approve tool %q failed (%v); do not retry it, tell the user", call.Name, err)
	}
	switch outcome {
	case tools.AllowedAlways:
		if !d.Protected {
			s.Grant(sid, call.Name, outside)
		}
		return tools.PreDecision{Kind: tools.Allow}
	case tools.AllowedOnce:
		return tools.PreDecision{Kind: tools.Allow}
	case tools.Rejected:
		return deny("the user rejected tool %q; ask the user how to proceed instead of retrying it", call.Name)
	case tools.Cancelled:
		return deny("approval for tool %q was cancelled", call.Name)
	default:
		return deny("approval for tool %q returned the unknown outcome %q", call.Name, outcome)
	}
}

// suggestedMode names the least permissive mode that would run the call.
func suggestedMode(call *tools.Call, s *Service, d Decision) Mode {
	def, ok := s.reg.For(call)
	if ok && def.Effect == tools.EffectWrite && len(d.Outside) == 0 {
		return ModeAcceptEdits
	}
	if ok && def.Sandboxed && len(d.Outside) == 0 && s.SandboxSupport().Available {
		return ModeAuto
	}
	return ModeBypass
}

func deny(format string, args ...any) tools.PreDecision {
	return tools.PreDecision{Kind: tools.Deny, Reason: fmt.Sprintf(format, args...)}
}
