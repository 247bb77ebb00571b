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
	replaced, ok := p.bound(ctx, call.Session, SaveRequest{
		ToolName:      call.Name,
		CallID:        call.CallID,
		Label:         "result",
		SuggestedName: call.Name + ".txt",
		Content:       text,
	})
	if !ok {
		return dec
	}
	dec.Content = []session.ContentBlock{session.TextBlock(replaced)}
	return dec
}

// BoundDispatchCopy is the policy's second arm (session-query design,
// host.md §5.3): it bounds the durable log copy of one nested sub-call's
// result, the copy a Code Mode runtime logs for each dispatch, and returns
// the copy to log. The program that made the sub-call keeps the full
// value; only this copy is replaced, by the same preview and notice, saved
// under the label "dispatch", keyed by the sub-call's id and named after
// the sub-tool. Unlike results shown to the model, read sub-calls are
// bounded too: a log copy is not model context, so no read loop can form.
// Text within the cap, a sub-call without a session, a failed save or a
// cap too small for the notice leave the copy as it is. dsh mounts no Code
// Mode yet; a composition that adds one calls this for every dispatch.
func (p *Policy) BoundDispatchCopy(ctx context.Context, sub *tools.Call, text string) string {
	if len(text) <= p.maxInline {
		return text
	}
	owner := sub.Session
	for c := sub; owner == nil && c.Parent != nil; c = c.Parent {
		owner = c.Parent.Session
	}
	replaced, ok := p.bound(ctx, owner, SaveRequest{
		ToolName:      sub.Name,
		CallID:        sub.CallID,
		Label:         "dispatch",
		SuggestedName: sub.Name + ".txt",
		Content:       text,
	})
	if !ok {
		return text
	}
	return replaced
}

// bound saves req.Content, an oversized text, for owner and returns the
// preview and notice that replace it; ok is false, after a warning, when
// the text must stay as it is.
func (p *Policy) bound(ctx context.Context, owner *session.Live, req SaveRequest) (string, bool) {
	log := p.log.With("tool", req.ToolName, "callId", req.CallID, "label", req.Label, "bytes", len(req.Content), "maxInlineBytes", p.maxInline)
	if owner == nil || owner.ID() == "" {
		log.Warn("spill-policy: oversized result kept inline: the call has no session to own the spill file")
		return "", false
	}
	req.SessionID = owner.ID()
	ref, err := p.store.SaveText(ctx, req)
	if err != nil {
		log.Warn("spill-policy: oversized result kept inline: saving it failed", "err", err)
		return "", false
	}
	replaced, ok := replacement(req.Content, ref, p.maxInline)
	if !ok {
		log.Warn("spill-policy: oversized result kept inline: max_inline_bytes is too small for the notice naming the spill file", "locator", ref.Locator)
		return "", false
	}
	return replaced, true
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
