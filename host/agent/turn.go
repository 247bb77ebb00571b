package agent

import (
	"context"
	"encoding/json"

	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// stepPlan is the assembly of one step: system prompt, tool schemas and
// runtime context, computed once before the step and reused by its retries.
type stepPlan struct {
	system       string
	tools        []tools.Schema
	toolsRaw     []json.RawMessage
	contextText  string
	contextParts []prompt.Rendered
}

// turn runs one turn inside ctx, from turn/start to turn/end.
func (a *Agent) turn(ctx context.Context) {
	if ctx.Err() != nil {
		// Cancelled before it started: nothing was claimed, nothing to log.
		return
	}
	n := a.lastTurn + 1
	if _, err := a.live.Append(session.TypeTurnStart, session.TurnStart{Turn: n}); err != nil {
		// Nothing can run on a log that refuses writes; dropping the queue
		// keeps the driver from spinning on it.
		a.log.Error("turn not started: the session log could not be written", "turn", n, "err", err)
		failure := writeError(err).failure
		a.mu.Lock()
		a.nextTurn, a.nextStep, a.retryTurn = nil, nil, false
		a.unlogged = &session.TurnEndReason{Kind: session.EndError, Error: &failure}
		a.mu.Unlock()
		return
	}
	a.mu.Lock()
	a.unlogged = nil
	a.mu.Unlock()
	a.lastTurn = n
	reason := a.runTurn(ctx, n)
	if reason.Kind == session.EndError {
		a.log.Warn("turn failed", "turn", n, "code", reason.Error.Code, "err", reason.Error.Message)
	}
	if _, err := a.live.Append(session.TypeTurnEnd, session.TurnEnd{Turn: n, Reason: reason}); err != nil {
		a.log.Error("turn end not logged: the session log could not be written", "turn", n, "err", err)
		// An error outcome already says why; any other one is overtaken
		// by the log that could not record it.
		if reason.Kind != session.EndError {
			failure := writeError(err).failure
			reason = session.TurnEndReason{Kind: session.EndError, Error: &failure}
		}
		a.mu.Lock()
		a.unlogged = &reason
		a.mu.Unlock()
	}
}

// runTurn is the step loop of host.md §2.2 and returns the turn-end reason.
func (a *Agent) runTurn(ctx context.Context, n int) session.TurnEndReason {
	var ends *session.TurnEndReason
	stepsOnly := false
	step := 0
	for {
		if ctx.Err() != nil {
			return a.endReason(ctx, ctx.Err())
		}
		if a.opts.ToolsReady != nil {
			a.opts.ToolsReady(ctx)
		}
		claimed, retry := a.claim(stepsOnly)
		plan, err := a.assemble()
		if err != nil {
			return a.endReason(ctx, err)
		}
		msgs, err := a.entering(plan, claimed)
		if err != nil {
			return a.endReason(ctx, err)
		}
		if ends != nil && len(msgs) == 0 {
			break
		}
		if step == 0 && len(msgs) == 0 && !retry {
			// A wake whose message went away owns the turn but spends no
			// model call.
			return session.TurnEndReason{Kind: session.EndCompleted}
		}
		if a.opts.Compaction.Enabled {
			compacted, err := a.autoCompact(ctx, n, plan, msgs)
			if err != nil {
				return a.endReason(ctx, err)
			}
			if compacted {
				// The summary may have shadowed the runtime context or
				// the instructions; enter them again.
				if msgs, err = a.entering(plan, claimed); err != nil {
					return a.endReason(ctx, err)
				}
			}
		}
		step++
		if _, err := a.live.Append(session.TypeStepStart, session.StepBoundary{Turn: n, Step: step}); err != nil {
			return a.endReason(ctx, writeError(err))
		}
		stepEnd, err := a.runStep(ctx, n, step, plan, msgs)
		if _, e := a.live.Append(session.TypeStepEnd, session.StepBoundary{Turn: n, Step: step}); e != nil && err == nil {
			err = writeError(e)
		}
		if err != nil {
			return a.endReason(ctx, err)
		}
		// max-tokens is sticky: a later completed step does not hide it.
		if ends == nil || ends.Kind != session.EndMaxTokens {
			ends = stepEnd
		}
		if ctx.Err() != nil {
			return a.endReason(ctx, ctx.Err())
		}
		if ends != nil && !a.hasSteering() {
			break
		}
		stepsOnly = true
	}
	return *ends
}

// endReason maps the error that stopped a turn to its turn-end reason;
// cancellation wins over whatever error it caused.
func (a *Agent) endReason(ctx context.Context, err error) session.TurnEndReason {
	if ctx.Err() != nil {
		cause := causeOf(ctx)
		return session.TurnEndReason{Kind: session.EndAborted, Reason: &cause}
	}
	f := failureOf(err)
	return session.TurnEndReason{Kind: session.EndError, Error: &f}
}

// claim takes the messages entering the next step: all steering, then (at a
// turn's first step) one queued prompt.
// claim takes the messages the next step enters; retry reports a turn
// opened by Retry, which makes its model call without a new message.
func (a *Agent) claim(stepsOnly bool) (claimed []session.Message, retry bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	claimed = a.nextStep
	a.nextStep = nil
	if !stepsOnly && a.retryTurn {
		a.retryTurn = false
		return claimed, true
	}
	if !stepsOnly && len(a.nextTurn) > 0 {
		claimed = append(claimed, a.nextTurn[0])
		a.nextTurn = a.nextTurn[1:]
	}
	return claimed, false
}

func (a *Agent) hasSteering() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.nextStep) > 0
}

// runStep enters the step's messages and title, then makes the model request
// and runs the tool calls it asks for. It returns the step's end (completed,
// max-tokens) or nil when the turn continues with another step.
func (a *Agent) runStep(ctx context.Context, turn, step int, plan *stepPlan, msgs []session.Message) (*session.TurnEndReason, error) {
	titleSeq, title := -1, ""
	if !a.titled && a.titledElsewhere() {
		a.titled = true
	}
	for _, m := range msgs {
		e, err := a.live.Append(session.TypeUserMessage, m)
		if err != nil {
			return nil, writeError(err)
		}
		if !a.titled && titleSeq < 0 && m.SourceKind() == session.SourceUser {
			if t := session.FallbackTitleFor(m); t != "" {
				titleSeq, title = e.Seq, t
			}
		}
	}
	a.hadSteps = true
	if titleSeq >= 0 {
		data := session.SessionTitle{Title: title, MessageSeqs: []int{titleSeq}, Source: json.RawMessage(`{"kind":"fallback"}`)}
		if _, err := a.live.Append(session.TypeSessionTitle, data); err != nil {
			return nil, writeError(err)
		}
		a.titled = true
	}
	return a.request(ctx, turn, step, plan)
}

// assemble renders the system prompt, the tool schemas and the runtime
// context for one step.
func (a *Agent) assemble() (*stepPlan, error) {
	plan := &stepPlan{}
	if a.opts.Prompt != nil {
		sc := a.scope()
		var err error
		if plan.system, err = a.opts.Prompt.System(sc); err != nil {
			return nil, err
		}
		if plan.contextText, plan.contextParts, err = a.opts.Prompt.RuntimeContext(sc); err != nil {
			return nil, err
		}
	}
	if a.opts.Tools != nil {
		plan.tools = a.opts.Tools.SchemasFor(a.live.ID())
		plan.toolsRaw = make([]json.RawMessage, len(plan.tools))
		for i, s := range plan.tools {
			raw, err := session.Marshal(s)
			if err != nil {
				return nil, err
			}
			plan.toolsRaw[i] = raw
		}
	}
	return plan, nil
}

// scope is the prompt scope of this agent; the loop's own variables come
// first so Options.Vars may override them.
func (a *Agent) scope() prompt.Scope {
	model, _ := a.Model()
	cwd := a.live.Header().CwdOrEmpty()
	vars := map[string]string{
		"provider": a.opts.Provider.Name(),
		"model":    model,
		"cwd":      cwd,
		"date":     a.opts.Now().Format("2006-01-02"),
	}
	if a.opts.Vars != nil {
		for k, v := range a.opts.Vars() {
			vars[k] = v
		}
	}
	return prompt.Scope{SessionID: a.live.ID(), Cwd: cwd, Vars: vars}
}

// titledElsewhere reports whether the log already holds a session/title that
// this agent did not write (a front end's /title before the first prompt).
// It is consulted only until the session has a title, so the scan is rare.
func (a *Agent) titledElsewhere() bool {
	for _, e := range a.live.Events(0) {
		if e.Type == session.TypeSessionTitle {
			return true
		}
	}
	return false
}
