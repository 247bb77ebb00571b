package permissions

import (
	"fmt"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Decision is the policy's verdict on one call before any approval.
type Decision struct {
	// Kind is tools.Allow, tools.Deny or tools.Ask.
	Kind string
	// Reason explains a denial (to the model) or an ask (to the approver).
	Reason string
	// Outside lists the call's paths outside the workspace.
	Outside []string
	// Protected is set when the ask is about a protected path (see
	// Service.Protect): no earlier "allow always" answer covers it, and an
	// "allow always" answer to it is taken as "allow once".
	Protected bool
}

// Decide applies the session's mode to call, whose definition is def.
func (s *Service) Decide(call *tools.Call, def *tools.Definition) Decision {
	mode := s.Mode(sessionID(call))
	if mode == ModeBypass || def.Effect == tools.EffectState {
		return Decision{Kind: tools.Allow}
	}
	outside, problem := s.outside(call, def)
	if def.Effect == tools.EffectWrite && mode == ModeReadOnly {
		return readOnlyDenial(call.Name)
	}
	if reason := s.protection(call, def); reason != "" {
		return Decision{Kind: tools.Ask, Reason: reason, Outside: outside, Protected: true}
	}
	switch def.Effect {
	case tools.EffectRead:
		if problem != "" {
			return Decision{Kind: tools.Ask, Reason: problem}
		}
		if len(outside) > 0 {
			return Decision{Kind: tools.Ask, Reason: "reads outside the workspace: " + list(outside), Outside: outside}
		}
		return Decision{Kind: tools.Allow}
	case tools.EffectWrite:
		if len(outside) > 0 {
			return Decision{Kind: tools.Ask, Reason: "changes files outside the workspace: " + list(outside), Outside: outside}
		}
		if problem != "" {
			return Decision{Kind: tools.Ask, Reason: problem}
		}
		if mode == ModeAcceptEdits {
			return Decision{Kind: tools.Allow}
		}
		return Decision{Kind: tools.Ask, Reason: fmt.Sprintf("permission mode %s asks before changing files", mode)}
	default:
		if mode == ModeReadOnly {
			return readOnlyDenial(call.Name)
		}
		if len(outside) > 0 {
			return Decision{Kind: tools.Ask, Reason: "runs outside the workspace: " + list(outside), Outside: outside}
		}
		return Decision{Kind: tools.Ask, Reason: fmt.Sprintf("permission mode %s asks before running commands", mode)}
	}
}

// outside returns the call's paths outside the workspace (reads may also use
// trusted roots). A definition whose presentation fails reports a reason
// instead, and the call is treated as unknown territory.
func (s *Service) outside(call *tools.Call, def *tools.Definition) (paths []string, problem string) {
	all, ok := callPaths(call, def)
	if !ok {
		return nil, fmt.Sprintf("the paths of this %s call could not be determined", call.Name)
	}
	var roots []string
	if def.Effect == tools.EffectRead {
		roots = s.trustedRoots()
	}
	for _, p := range all {
		if within(call.Cwd, p) {
			// A file with other hard links may be the same inode as a file
			// outside the workspace (a package store, a planted link):
			// changing it changes that file too, so a write asks.
			if def.Effect != tools.EffectRead && hardLinked(p) {
				paths = append(paths, p+" (a hard-linked file, possibly shared with paths outside the workspace)")
			}
			continue
		}
		trusted := false
		for _, r := range roots {
			if within(r, p) {
				trusted = true
				break
			}
		}
		if !trusted {
			paths = append(paths, p)
		}
	}
	return paths, ""
}

func readOnlyDenial(tool string) Decision {
	return Decision{Kind: tools.Deny, Reason: fmt.Sprintf(
		"tool %q is not allowed in the read-only permission mode, which only permits reading and searching; describe the change instead, or ask the user to switch the permission mode (/mode in the terminal UI, the mode selector in the editor)", tool)}
}

func list(paths []string) string {
	const show = 3
	if len(paths) <= show {
		return strings.Join(paths, ", ")
	}
	return strings.Join(paths[:show], ", ") + fmt.Sprintf(" and %d more", len(paths)-show)
}

func sessionID(call *tools.Call) string {
	if call.Session == nil {
		return ""
	}
	return call.Session.ID()
}
