package agent

import (
	"bytes"
	"encoding/json"

	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// entering returns the user messages a step enters: the claimed messages,
// the workspace instructions (on the session's first step, and again after a
// compaction summarized them away), and the runtime-context snapshot when it
// differs from the one the model last saw.
func (a *Agent) entering(plan *stepPlan, claimed []session.Message) ([]session.Message, error) {
	events := a.live.Events(0)
	fold, err := session.Fold(events)
	if err != nil {
		return nil, err
	}
	msgs := append([]session.Message(nil), claimed...)
	if m := a.instructionsMessage(events, fold); m != nil {
		msgs = append(msgs, *m)
	}
	if m := a.contextMessage(plan, events, fold); m != nil {
		msgs = append(msgs, *m)
	}
	return msgs, nil
}

// lastOwned finds the latest user/message whose source contains marker and
// satisfies owned; the marker is a cheap filter that spares decoding every
// message of a long log.
func lastOwned(events []session.Event, marker []byte, owned func(session.Message) bool) (session.Event, session.Message, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Type != session.TypeUserMessage || !bytes.Contains(e.Data, marker) {
			continue
		}
		var m session.Message
		if e.DecodeData(&m) != nil || !owned(m) {
			continue
		}
		return e, m, true
	}
	return session.Event{}, session.Message{}, false
}

func (a *Agent) instructionsMessage(events []session.Event, fold *session.SurfaceFold) *session.Message {
	cwd := a.live.Header().CwdOrEmpty()
	if cwd == "" {
		return nil
	}
	need := !a.hadSteps
	if !need {
		e, _, ok := lastOwned(events, []byte(`"`+session.SourceInstructions+`"`), func(m session.Message) bool {
			return m.SourceKind() == session.SourceInstructions
		})
		need = ok && shadowed(fold, e.Seq)
	}
	if !need {
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
func (a *Agent) contextMessage(plan *stepPlan, events []session.Event, fold *session.SurfaceFold) *session.Message {
	e, m, existed := lastOwned(events, []byte(prompt.PluginName), isRuntimeContext)
	if !existed && plan.contextText == "" {
		return nil
	}
	snapshot := plan.contextText
	if snapshot == "" {
		snapshot = prompt.NoRuntimeContextText
	}
	if existed && !shadowed(fold, e.Seq) && len(m.Content) == 1 &&
		m.Content[0].Type == session.BlockText && m.Content[0].Text == snapshot {
		return nil
	}
	if plan.contextText == "" {
		none := prompt.NoRuntimeContextMessage(a.opts.NewID())
		return &none
	}
	msg := prompt.RuntimeContextMessage(plan.contextText, plan.contextParts, a.opts.NewID())
	return &msg
}

func isRuntimeContext(m session.Message) bool {
	if m.SourceKind() != session.SourcePlugin {
		return false
	}
	var src struct {
		Plugin string `json:"plugin"`
	}
	return json.Unmarshal(m.Source, &src) == nil && src.Plugin == prompt.PluginName
}
