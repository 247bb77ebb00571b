package permissions

import (
	"fmt"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/confine"
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
	// Access is how the tool may reach the call's paths if it runs.
	Access *confine.Access
	// Sandbox, on an allowed command, says it runs sandboxed (auto mode).
	Sandbox *tools.Sandbox
}

// Decide applies the session's mode to call, whose definition is def.
func (s *Service) Decide(call *tools.Call, def *tools.Definition) Decision {
	mode := s.Mode(sessionID(call))
	if mode == ModeBypass || def.Effect == tools.EffectState {
		return Decision{Kind: tools.Allow, Access: confine.Unrestricted()}
	}
	outside, access, problem := s.outside(call, def)
	d := s.decide(call, def, mode, outside, problem)
	d.Access = access
	return d
}

func (s *Service) decide(call *tools.Call, def *tools.Definition, mode Mode, outside []string, problem string) Decision {
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
		if mode == ModeAcceptEdits || mode == ModeAuto {
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
		if mode == ModeAuto {
			return s.decideAuto(call, def)
		}
		return Decision{Kind: tools.Ask, Reason: fmt.Sprintf("permission mode %s asks before running commands", mode)}
	}
}

// outside returns the call's paths outside the workspace (reads may also use
// trusted roots) and the access the tool gets to all of them: confined
// beneath the workspace or a trusted root, or pinned to the file found now.
// A definition whose presentation fails reports a reason instead, and the
// call is treated as unknown territory.
func (s *Service) outside(call *tools.Call, def *tools.Definition) (paths []string, access *confine.Access, problem string) {
	all, ok := callPaths(call, def)
	if !ok {
		return nil, confine.Grants(), fmt.Sprintf("the paths of this %s call could not be determined", call.Name)
	}
	var grants []confine.Grant
	defer func() { access = confine.Grants(grants...) }()
	var roots []string
	if def.Effect == tools.EffectRead {
		roots = s.trustedRoots(sessionID(call))
	}
	for _, p := range all {
		if within(call.Cwd, p) {
			// A file with other hard links may be the same inode as a file
			// outside the workspace (a package store, a planted link):
			// reading it reads that file, changing it changes that file too,
			// so it counts as outside.
			if hardLinked(p) {
				paths = append(paths, p+" (a hard-linked file, possibly shared with paths outside the workspace)")
				grants = append(grants, pin(p))
				continue
			}
			grants = append(grants, confine.Beneath(p, call.Cwd))
			continue
		}
		trusted := ""
		for _, r := range roots {
			if within(r, p) {
				trusted = r
				break
			}
		}
		if trusted != "" {
			grants = append(grants, confine.Beneath(p, trusted))
			continue
		}
		paths = append(paths, p)
		grants = append(grants, pin(p))
	}
	return paths, access, ""
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
