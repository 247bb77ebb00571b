package agent

import (
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// entering returns the user messages a step enters: the claimed messages,
// the workspace instructions (on the session's first step, and again after a
// compaction summarized them away), and the runtime-context snapshot when it
// differs from the one the model last saw.
func (a *Agent) entering(plan *stepPlan, claimed []session.Message) ([]session.Message, error) {
	if err := a.hist.sync(a.live); err != nil {
		return nil, err
	}
	msgs := append([]session.Message(nil), claimed...)
	if m := a.instructionsMessage(); m != nil {
		msgs = append(msgs, *m)
	}
	if m := a.contextMessage(plan); m != nil {
		msgs = append(msgs, *m)
	}
	return msgs, nil
}

func (a *Agent) instructionsMessage() *session.Message {
	cwd := a.live.Header().CwdOrEmpty()
	if cwd == "" {
		return nil
	}
	last := a.hist.lastInstructions
	if a.hadSteps && (last < 0 || !a.hist.shadowed(last)) {
		return nil
	}
	m, err := prompt.LoadInstructions(cwd, a.opts.InstructionsMaxBytes, a.opts.NewID())
	if err != nil {
		a.log.Warn("workspace instructions not loaded", "cwd", cwd, "err", err)
		return nil
	}
	return m
}

// contextMessage projects the runtime context (host.md §2.6): a snapshot
// when its text changed since the last retained one, or when that one was
// shadowed by a compaction; the "none" notice when the context became empty
// after a snapshot existed.
func (a *Agent) contextMessage(plan *stepPlan) *session.Message {
	last := a.hist.lastContext
	if last < 0 && plan.contextText == "" {
		return nil
	}
	snapshot := plan.contextText
	if snapshot == "" {
		snapshot = prompt.NoRuntimeContextText
	}
	if last >= 0 && !a.hist.shadowed(last) {
		if m := a.hist.msgs[last]; len(m.Content) == 1 && m.Content[0].Type == session.BlockText && m.Content[0].Text == snapshot {
			return nil
		}
	}
	if plan.contextText == "" {
		none := prompt.NoRuntimeContextMessage(a.opts.NewID())
		return &none
	}
	msg := prompt.RuntimeContextMessage(plan.contextText, plan.contextParts, a.opts.NewID())
	return &msg
}
