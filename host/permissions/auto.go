package permissions

import (
	"context"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// unsandboxedGrant is the grant key of "allow always" answered to running
// a tool's sandbox-denied commands outside the sandbox.
const unsandboxedGrant = " outside the sandbox"

// UseSandbox tells the service what the commands' sandbox enforces;
// support is consulted at every decision, so a sandbox mounted later
// counts. Without it, auto mode asks before every command.
func (s *Service) UseSandbox(support func() sandbox.Support) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sandbox = support
}

// SandboxSupport reports the sandbox commands run in under auto mode.
func (s *Service) SandboxSupport() sandbox.Support {
	s.mu.Lock()
	f := s.sandbox
	s.mu.Unlock()
	if f == nil {
		return sandbox.Support{Reason: "no sandbox is set up in this dsh"}
	}
	return f()
}

// decideAuto decides a command inside the workspace in auto mode: it runs
// sandboxed and unasked when it can be sandboxed, and asks otherwise,
// saying why.
func (s *Service) decideAuto(call *tools.Call, def *tools.Definition) Decision {
	if !def.Sandboxed {
		return Decision{Kind: tools.Ask, Reason: fmt.Sprintf("permission mode auto runs only sandboxed commands without asking, and %s cannot run in the sandbox", call.Name)}
	}
	if sup := s.SandboxSupport(); !sup.Available {
		return Decision{Kind: tools.Ask, Reason: "permission mode auto asks before running commands here because they cannot be sandboxed: " + sup.Reason}
	}
	return Decision{Kind: tools.Allow, Sandbox: &tools.Sandbox{Escalate: s.escalator(call)}}
}

// escalator asks, through the registry's approver, whether a command the
// sandbox denied may run again outside it. "Allow always" covers later
// denials of the same tool in the session; without an approver the answer
// is no.
func (s *Service) escalator(decided *tools.Call) func(ctx context.Context, call *tools.Call, why string) (bool, error) {
	sid := sessionID(decided)
	grant := decided.Name + unsandboxedGrant
	return func(ctx context.Context, call *tools.Call, why string) (bool, error) {
		if s.Mode(sid) != ModeAuto {
			return false, nil
		}
		if s.granted(sid, grant, false) {
			return true, nil
		}
		a := s.reg.Approver()
		if a == nil {
			return false, nil
		}
		outcome, err := a.Approve(ctx, call, why)
		if err != nil {
			return false, err
		}
		switch outcome {
		case tools.AllowedAlways:
			s.Grant(sid, grant, false)
			return true, nil
		case tools.AllowedOnce:
			return true, nil
		}
		return false, nil
	}
}
