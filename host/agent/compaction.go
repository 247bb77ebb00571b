package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// CompactionConfig configures summarizing older history: it is the
// compaction config section (CompactionSchema). A zero ratio or token count
// takes the section's default from configs/default.yaml; Enabled is a
// switch, so an agent built in code without it does not compact on its
// own, where a loaded config (enabled: true by default) does.
type CompactionConfig struct {
	// Enabled turns on automatic compaction before a step whose request is
	// estimated above ThresholdRatio of the model's context window (skipped
	// when the window is unknown), and once per step after the provider
	// rejects a request as too long (CONTEXT_WINDOW_EXCEEDED), retrying it on
	// the compacted history. Compact works regardless.
	Enabled bool `mapstructure:"enabled"`
	// ThresholdRatio is the share of the context window that triggers it.
	ThresholdRatio float64 `mapstructure:"threshold_ratio"`
	// RetainRatio is the share of the conversation's estimated tokens kept
	// verbatim at its end.
	RetainRatio float64 `mapstructure:"retain_ratio"`
	// MaxSummaryTokens caps the summary call's output.
	MaxSummaryTokens int `mapstructure:"max_summary_tokens"`
}

// withDefaults fills c's zero fields from d.
func (c CompactionConfig) withDefaults(d CompactionConfig) CompactionConfig {
	if c.ThresholdRatio == 0 {
		c.ThresholdRatio = d.ThresholdRatio
	}
	if c.RetainRatio == 0 {
		c.RetainRatio = d.RetainRatio
	}
	if c.MaxSummaryTokens == 0 {
		c.MaxSummaryTokens = d.MaxSummaryTokens
	}
	return c
}

// Compaction triggers: the estimate crossed the threshold before a step, the
// provider rejected a request as too long for the window, or Compact.
const (
	TriggerPressure = "pressure"
	TriggerOverflow = "context-overflow"
	TriggerManual   = "manual"
)

// CompactionPlugin is the plugin name in the source of a compaction summary
// message: {kind:"plugin", plugin, form:"checkpoint", compactionId}.
const CompactionPlugin = "dsh/compaction"

// CompactionStart is the data of compaction/start. Turn is null for a
// compaction run between turns.
type CompactionStart struct {
	CompactionID string `json:"compactionId"`
	Turn         *int   `json:"turn"`
	Trigger      string `json:"trigger"`
}

// SeqRange is an inclusive positional range of surface nodes.
type SeqRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// CompactionSummary is the data of compaction/summary.
type CompactionSummary struct {
	CompactionID       string         `json:"compactionId"`
	Summary            string         `json:"summary"`
	ShadowedRange      SeqRange       `json:"shadowedRange"`
	ShadowedSeqs       []int          `json:"shadowedSeqs"`
	ShadowedTokenCount int            `json:"shadowedTokenCount"`
	Provider           string         `json:"provider"`
	Model              string         `json:"model"`
	Usage              *session.Usage `json:"usage,omitempty"`
}

// CompactionEnd is the data of compaction/end; Error is set when the attempt
// replaced nothing.
type CompactionEnd struct {
	CompactionID string `json:"compactionId"`
	Turn         *int   `json:"turn"`
	Error        string `json:"error,omitempty"`
}

// compactionInstruction ends the summary request, after the history it
// summarizes, so the request shares its prefix with the conversation's.
const compactionInstruction = `Summarize the conversation above so the work can go on without it: your summary will replace all of it in your context. Be dense and exact, and use these headings with short bullets:

## Goals
What the user asked for, including later changes, corrections and stated preferences (quote exact wording where it matters).

## Decisions
What was decided and why; constraints and conventions agreed on.

## Files
Every file read, created or changed, by exact path, with what matters about it.

## Commands and errors
Commands run and their outcome; errors hit and how they were resolved.

## Open work
What remains to be done, and the immediate next step.

Keep identifiers, paths, commands, error messages and numbers verbatim. If the conversation starts with an earlier <compacted-summary>, merge it in: keep what is still true and drop what is stale. Reply with the summary only, and do not call any tool.`

const checkpointPreamble = "Earlier parts of this conversation were compacted to save context; the summary below replaces them. Treat it as established background and continue from the messages that follow, without mentioning this note."

func checkpointText(summary string) string {
	return checkpointPreamble + "\n\n<compacted-summary>\n" + summary + "\n</compacted-summary>"
}

func checkpointSource(id string) json.RawMessage {
	return session.MustMarshal(struct {
		Kind         string `json:"kind"`
		Plugin       string `json:"plugin"`
		Form         string `json:"form"`
		CompactionID string `json:"compactionId"`
	}{session.SourcePlugin, CompactionPlugin, "checkpoint", id})
}

// autoCompact compacts before a step when the request would come close to
// the model's context window. A failed compaction is logged and the turn
// goes on uncompacted; only cancellation and log failures stop it.
func (a *Agent) autoCompact(ctx context.Context, turn int, plan *stepPlan, pending []session.Message) (bool, error) {
	model, _ := a.Model()
	window := a.opts.Provider.Model(model).ContextWindow
	if window <= 0 {
		return false, nil
	}
	if err := a.hist.sync(a.live); err != nil {
		return false, err
	}
	nodes := a.hist.surface()
	est := pressure(plan, nodes, a.hist.lastReplacement(), pending)
	threshold := int(a.opts.Compaction.ThresholdRatio * float64(window))
	if est < threshold {
		return false, nil
	}
	r := selectRegion(nodes, a.opts.Compaction.RetainRatio)
	if r == nil {
		a.log.Warn("conversation is close to the context window but nothing can be compacted", "estimate", est, "window", window)
		return false, nil
	}
	a.log.Info("compacting conversation", "estimate", est, "threshold", threshold, "nodes", len(r.nodes))
	err := a.compact(ctx, &turn, TriggerPressure, plan, r)
	var ce *CompactionError
	if errors.As(err, &ce) {
		a.log.Warn("automatic compaction failed; continuing uncompacted", "err", ce.Cause)
		return false, nil
	}
	return err == nil, err
}

// overflowCompact compacts after the provider rejected a request for
// exceeding the context window, whatever the estimate said. It reports
// whether history was replaced; a failed attempt leaves the original error
// to end the turn.
func (a *Agent) overflowCompact(ctx context.Context, turn int, plan *stepPlan) (bool, error) {
	if err := a.hist.sync(a.live); err != nil {
		return false, err
	}
	r := selectRegion(a.hist.surface(), a.opts.Compaction.RetainRatio)
	if r == nil {
		return false, nil
	}
	err := a.compact(ctx, &turn, TriggerOverflow, plan, r)
	var ce *CompactionError
	if errors.As(err, &ce) {
		a.log.Warn("compaction after a context overflow failed", "err", ce.Cause)
		return false, nil
	}
	return err == nil, err
}

// compactNow is the body of Compact.
func (a *Agent) compactNow(ctx context.Context) error {
	plan, err := a.assemble()
	if err != nil {
		return err
	}
	if err := a.hist.sync(a.live); err != nil {
		return err
	}
	r := selectRegion(a.hist.surface(), a.opts.Compaction.RetainRatio)
	if r == nil {
		return ErrNothingToCompact
	}
	err = a.compact(ctx, nil, TriggerManual, plan, r)
	if ferr := a.live.Flush(); ferr != nil && err == nil {
		err = writeError(ferr)
	}
	return err
}

// compact runs one logged compaction of r. A failure that leaves the
// history unchanged is a *CompactionError; cancellation and log failures are
// returned as they are.
func (a *Agent) compact(ctx context.Context, turn *int, trigger string, plan *stepPlan, r *region) error {
	id := a.opts.NewID()
	start, err := a.live.Append(session.TypeCompactionStart, CompactionStart{CompactionID: id, Turn: turn, Trigger: trigger})
	if err != nil {
		return writeError(err)
	}
	chunkTurn := a.lastTurn
	if turn != nil {
		chunkTurn = *turn
	}
	summary, req, usage, err := a.summarize(ctx, plan, r, chunkTurn)
	if err == nil {
		err = a.commitSummary(id, start.Seq, turn, r, summary, req, usage)
		if err == nil {
			return nil
		}
	}
	var fe *failError
	if errors.As(err, &fe) && fe.failure.Code == CodeSessionWrite {
		return err
	}
	text := err.Error()
	if ctx.Err() != nil {
		text = (&cancelError{causeOf(ctx)}).Error()
	}
	if _, werr := a.live.Append(session.TypeCompactionEnd, CompactionEnd{CompactionID: id, Turn: turn, Error: text}); werr != nil {
		return writeError(werr)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &CompactionError{CompactionID: id, Cause: err}
}

// summarize makes the summary call. Its chunks are logged as assistant/chunk
// events of step 0 so the call is part of the replayable log.
func (a *Agent) summarize(ctx context.Context, plan *stepPlan, r *region, turn int) (string, llm.Request, *session.Usage, error) {
	header, _ := a.header(plan)
	cfg := header.Config
	cfg.MaxTokens = session.Ptr(a.opts.Compaction.MaxSummaryTokens)
	msgs := make([]session.Message, 0, len(r.nodes)+1)
	for _, n := range r.nodes {
		if n.msg != nil {
			msgs = append(msgs, *n.msg)
		}
	}
	msgs = append(msgs, session.Message{
		Role:    session.RoleUser,
		Content: []session.ContentBlock{session.TextBlock(compactionInstruction)},
		Source:  session.PluginSource(CompactionPlugin, "instruction"),
		ID:      a.opts.NewID(),
	})
	req := llm.Request{
		SessionID: a.live.ID(),
		Config:    cfg,
		System:    plan.system,
		Tools:     plan.tools,
		Messages:  msgs,
		Purpose:   llm.PurposeCompaction,
	}
	if err := a.live.Flush(); err != nil {
		return "", req, nil, writeError(err)
	}
	att, err := a.streamChunks(ctx, req, turn, 0)
	if err != nil {
		return "", req, nil, err
	}
	if ctx.Err() != nil {
		return "", req, nil, ctx.Err()
	}
	fin := att.asm.Finish()
	switch fin.Kind {
	case llm.FinishError, llm.FinishAborted:
		return "", req, nil, &llm.Error{Failure: failureOfFinish(fin)}
	case llm.FinishMaxTokens:
		return "", req, nil, fmt.Errorf("the summary was cut off at %d output tokens", a.opts.Compaction.MaxSummaryTokens)
	}
	text := strings.TrimSpace(session.JoinText(att.asm.Blocks()))
	if text == "" {
		return "", req, nil, errors.New("the model returned no summary text")
	}
	return text, req, att.asm.Usage(), nil
}

// commitSummary appends compaction/summary, the replacing user/message and
// compaction/end.
func (a *Agent) commitSummary(id string, startSeq int, turn *int, r *region, summary string, req llm.Request, usage *session.Usage) error {
	msg := session.Message{
		Role:    session.RoleUser,
		Content: []session.ContentBlock{session.TextBlock(checkpointText(summary))},
		Source:  checkpointSource(id),
		ID:      a.opts.NewID(),
	}
	if t := messageTokens(msg); t >= r.tokens {
		return fmt.Errorf("the summary (about %d tokens) is not smaller than the history it would replace (about %d tokens)", t, r.tokens)
	}
	shadowed := r.seqs()
	first, last := shadowed[0], shadowed[len(shadowed)-1]
	data := CompactionSummary{
		CompactionID:       id,
		Summary:            summary,
		ShadowedRange:      SeqRange{Start: first, End: last},
		ShadowedSeqs:       shadowed,
		ShadowedTokenCount: r.tokens,
		Provider:           req.Config.Provider,
		Model:              req.Config.Model,
		Usage:              usage,
	}
	sum, err := a.live.Append(session.TypeCompactionSummary, data)
	if err != nil {
		return writeError(err)
	}
	sources := append([]int{startSeq, sum.Seq}, shadowed...)
	if _, err := a.live.Append(session.TypeUserMessage, msg,
		session.WithSurface(session.OpReplace(first, last)), session.WithSources(sources...)); err != nil {
		return writeError(err)
	}
	if _, err := a.live.Append(session.TypeCompactionEnd, CompactionEnd{CompactionID: id, Turn: turn}); err != nil {
		return writeError(err)
	}
	return nil
}
