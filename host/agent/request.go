package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// request makes the step's model call, retrying retryable failures in the
// same step, appends the assistant message and runs its tool calls.
func (a *Agent) request(ctx context.Context, turn, step int, plan *stepPlan) (*session.TurnEndReason, error) {
	retries, retryID := 0, ""
	overflowed := false
	for {
		req, err := a.buildRequest(plan)
		if err != nil {
			return nil, err
		}
		// Durability barrier: the request must be reconstructable from the
		// log on disk before it leaves the process.
		if err := a.live.Flush(); err != nil {
			return nil, writeError(err)
		}
		att, err := a.stream(ctx, req, turn, step)
		if err != nil {
			return nil, err
		}
		fin := att.asm.Finish()
		if fin.Kind == llm.FinishError || fin.Kind == llm.FinishAborted {
			failure := failureOfFinish(fin)
			if failure.Code == llm.CodeContextExceeded && a.opts.Compaction.Enabled && !overflowed {
				// The estimate missed: compact once and try again.
				overflowed = true
				compacted, err := a.overflowCompact(ctx, turn, plan)
				if err != nil {
					return nil, err
				}
				if compacted {
					continue
				}
			}
			delay, ok := a.opts.Retry.Delay(retries+1, failure, a.opts.Rand)
			if !ok {
				return nil, &failError{failure: failure}
			}
			retries++
			if retryID == "" {
				retryID = a.opts.NewID()
			}
			if err := a.retry(ctx, req, turn, step, retryID, retries, failure, delay); err != nil {
				return nil, err
			}
			continue
		}
		msg := session.Message{
			Role:    session.RoleAssistant,
			Content: att.asm.Blocks(),
			Source:  session.ModelSource(req.Config.Provider, req.Config.Model),
			ID:      a.opts.NewID(),
		}
		data := session.AssistantMessage{Turn: turn, Step: step, Message: msg, Usage: att.asm.Usage()}
		if _, err := a.live.Append(session.TypeAssistantMessage, data, session.WithSources(att.seqs...)); err != nil {
			return nil, writeError(err)
		}
		if fin.Kind == llm.FinishMaxTokens {
			return &session.TurnEndReason{Kind: session.EndMaxTokens}, nil
		}
		var calls []session.ContentBlock
		for _, b := range msg.Content {
			if b.Type == session.BlockToolCall {
				calls = append(calls, b)
			}
		}
		if len(calls) == 0 {
			return &session.TurnEndReason{Kind: session.EndCompleted}, nil
		}
		concluded, err := a.runToolCalls(ctx, turn, step, calls)
		if err != nil {
			return nil, err
		}
		if concluded {
			return &session.TurnEndReason{Kind: session.EndCompleted}, nil
		}
		return nil, nil
	}
}

// retry logs a scheduled retry, waits for it and logs its start.
func (a *Agent) retry(ctx context.Context, req llm.Request, turn, step int, id string, n int, f session.Failure, delay time.Duration) error {
	p := a.opts.Retry
	ev := session.LLMRetry{
		RetryID:    id,
		Turn:       turn,
		Step:       step,
		Provider:   req.Config.Provider,
		Mode:       "normal",
		PolicyKey:  policyKey(p),
		Failure:    f,
		DelayMs:    delay.Milliseconds(),
		Retry:      n,
		MaxRetries: p.MaxRetries,
	}
	if _, err := a.live.Append(session.TypeLLMRetry, ev); err != nil {
		return writeError(err)
	}
	a.log.Info("retrying model request", "code", f.Code, "retry", n, "delay", delay)
	if err := a.opts.Sleep(ctx, delay); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	started := session.LLMRetryStarted{RetryID: id, Turn: turn, Step: step, Retry: n}
	if _, err := a.live.Append(session.TypeLLMRetryStart, started); err != nil {
		return writeError(err)
	}
	return nil
}

// policyKey identifies a retry policy in llm/retry events, so a reader can
// tell retries of different policies apart.
func policyKey(p llm.RetryPolicy) string {
	codes := slices.Clone(p.Codes)
	slices.Sort(codes)
	key, _ := session.Marshal([]any{"normal", p.MaxRetries, codes, p.InitialDelay.Milliseconds(), p.MaxDelay.Milliseconds(), p.Jitter})
	return string(key)
}

func failureOfFinish(fin llm.Finish) session.Failure {
	if fin.Failure != nil {
		return *fin.Failure
	}
	return session.Failure{Code: llm.CodeUnknown, Message: fmt.Sprintf("model stream finished with %s", fin.Kind)}
}

// buildRequest resolves the call config, appends request/header and
// request/context when they changed, and derives the messages from the log.
func (a *Agent) buildRequest(plan *stepPlan) (llm.Request, error) {
	header, info := a.header(plan)
	reason := ""
	switch {
	case !a.headerLogged && a.lastHeader == nil:
		reason = session.HeaderInitial
	case !a.headerLogged:
		reason = session.HeaderResume
	case a.lastHeader == nil || !headersEqual(*a.lastHeader, header):
		reason = session.HeaderChange
	}
	if reason != "" {
		if _, err := a.live.Append(session.TypeRequestHeader, session.RequestHeader{Header: header, Reason: reason}); err != nil {
			return llm.Request{}, writeError(err)
		}
		a.headerLogged, a.lastHeader = true, &header
	}
	rc := session.RequestContext{Provider: header.Config.Provider, Model: header.Config.Model, ContextWindow: info.ContextWindow}
	if a.lastContext == nil || *a.lastContext != rc {
		if _, err := a.live.Append(session.TypeRequestContext, rc); err != nil {
			return llm.Request{}, writeError(err)
		}
		a.lastContext = &rc
	}
	if err := a.hist.sync(a.live); err != nil {
		return llm.Request{}, fmt.Errorf("derive the conversation from the session log: %w", err)
	}
	msgs := a.hist.messages()
	return llm.Request{
		SessionID: a.live.ID(),
		Config:    header.Config,
		System:    plan.system,
		Tools:     plan.tools,
		Messages:  msgs,
		Purpose:   llm.PurposeTurn,
	}, nil
}

// header resolves the canonical request header: the explicit config plus the
// model's defaults, which are marked in adapterDefaults so that the next
// proposal leaves them out and a model switch re-materializes its own.
func (a *Agent) header(plan *stepPlan) (session.EpochHeader, llm.ModelInfo) {
	model, effort := a.Model()
	cfg := session.CallConfig{Provider: a.opts.Provider.Name(), Model: model, ReasoningEffort: effort}
	if a.opts.MaxTokens > 0 {
		cfg.MaxTokens = session.Ptr(a.opts.MaxTokens)
	}
	info := a.opts.Provider.Model(model)
	var defaults session.AdapterDefaults
	if cfg.MaxTokens == nil && info.DefaultMaxTokens > 0 {
		cfg.MaxTokens, defaults.MaxTokens = session.Ptr(info.DefaultMaxTokens), true
	}
	if cfg.ReasoningEffort == "" && info.DefaultEffort != "" {
		cfg.ReasoningEffort, defaults.ReasoningEffort = info.DefaultEffort, true
	}
	h := session.EpochHeader{Config: cfg, System: plan.system, Tools: plan.toolsRaw}
	if defaults.MaxTokens || defaults.ReasoningEffort {
		h.AdapterDefaults = &defaults
	}
	return h, info
}

// headersEqual compares two canonical headers field-wise: config, the
// adapter-default flags, the system prompt and the tool schemas in order.
func headersEqual(x, y session.EpochHeader) bool {
	cx, cy := x.Config, y.Config
	if cx.Provider != cy.Provider || cx.Model != cy.Model || cx.ReasoningEffort != cy.ReasoningEffort {
		return false
	}
	if (cx.MaxTokens == nil) != (cy.MaxTokens == nil) || (cx.MaxTokens != nil && *cx.MaxTokens != *cy.MaxTokens) {
		return false
	}
	var dx, dy session.AdapterDefaults
	if x.AdapterDefaults != nil {
		dx = *x.AdapterDefaults
	}
	if y.AdapterDefaults != nil {
		dy = *y.AdapterDefaults
	}
	if dx != dy || x.System != y.System || len(x.Tools) != len(y.Tools) {
		return false
	}
	for i := range x.Tools {
		if !jsonEqual(x.Tools[i], y.Tools[i]) {
			return false
		}
	}
	return true
}

func jsonEqual(x, y json.RawMessage) bool {
	if bytes.Equal(x, y) {
		return true
	}
	var bx, by bytes.Buffer
	if json.Compact(&bx, x) != nil || json.Compact(&by, y) != nil {
		return false
	}
	return bytes.Equal(bx.Bytes(), by.Bytes())
}
