package spill

import (
	"context"
	"log/slog"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// readTool is never spilled: its results are how the model reads a spill
// file back, in windows the read tool itself bounds.
const readTool = "read"

// Policy bounds accepted tool results to MaxInlineBytes.
type Policy struct {
	store     Store
	maxInline int
	log       *slog.Logger
}

// NewPolicy returns a policy saving through store. maxInlineBytes must be
// non-negative; log receives the warnings of results kept inline.
func NewPolicy(store Store, maxInlineBytes int, log *slog.Logger) *Policy {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Policy{store: store, maxInline: maxInlineBytes, log: log}
}

// Install prepends the policy to reg's post-execute chain, so it sees the
// decision every later-registered handler settled on.
func (p *Policy) Install(reg *tools.Registry) (remove func()) {
	return reg.PostExecute.Prepend(p.PostExecute)
}

// PostExecute is the middleware: it calls next first, then bounds the
// accepted content.
func (p *Policy) PostExecute(ctx context.Context, in tools.PostInput, next hook.Next[tools.PostInput, tools.PostDecision]) tools.PostDecision {
	dec := next(ctx, in)
	call := in.Call
	if dec.Kind != tools.Accept || dec.ReplaceValue || call.Parent != nil || call.Name == readTool {
		return dec
	}
	content := dec.Content
	if content == nil {
		content = in.Result.Content
	}
	size, ok := textSize(content)
	if !ok || size <= p.maxInline {
		return dec
	}
	text := session.JoinText(content)
	log := p.log.With("tool", call.Name, "callId", call.CallID, "bytes", len(text), "maxInlineBytes", p.maxInline)
	if call.Session == nil || call.Session.ID() == "" {
		log.Warn("spill-policy: oversized result kept inline: the call has no session to own the spill file")
		return dec
	}
	ref, err := p.store.SaveText(ctx, SaveRequest{
		SessionID:     call.Session.ID(),
		ToolName:      call.Name,
		CallID:        call.CallID,
		Label:         "result",
		SuggestedName: call.Name + ".txt",
		Content:       text,
	})
	if err != nil {
		log.Warn("spill-policy: oversized result kept inline: saving it failed", "err", err)
		return dec
	}
	replaced, ok := replacement(text, ref, p.maxInline)
	if !ok {
		log.Warn("spill-policy: oversized result kept inline: max_inline_bytes is too small for the notice naming the spill file", "locator", ref.Locator)
		return dec
	}
	dec.Content = []session.ContentBlock{session.TextBlock(replaced)}
	return dec
}

// textSize is the byte length of the blocks' texts concatenated without a
// separator; ok is false when a block is not text, because such content
// cannot be previewed as text. It lets the common small result pass without
// building the concatenation.
func textSize(blocks []session.ContentBlock) (size int, ok bool) {
	for _, blk := range blocks {
		if blk.Type != session.BlockText {
			return 0, false
		}
		size += len(blk.Text)
	}
	return size, true
}
