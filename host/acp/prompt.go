package acp

import (
	"context"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Prompt runs one prompt turn: it admits the content, hands it to the
// agent, and answers once the agent is idle and every update was written.
// A prompt that is one of the offered slash commands runs the command
// instead (commands.go).
// A prompt that arrives while another runs on the session (Zed sends one
// without cancelling first) cancels the running one, waits for it to
// answer, then runs.
func (s *server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	done, err := s.enter()
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	defer done()
	ss, err := s.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	if c, arg, ok := s.parseCommand(p.Prompt); ok {
		return s.runCommand(ctx, ss, c, arg)
	}
	text, err := admit(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	run, err := ss.begin(ctx, s.b.NewID())
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	if ctx.Err() == nil {
		ss.agent.Followup(agent.UserText(text, run.msgID))
		stop := context.AfterFunc(ctx, func() { ss.cancel(run) })
		// The agent always goes idle: a cancelled turn still ends, and
		// closing the session cancels it.
		_ = ss.agent.WhenIdle(context.WithoutCancel(ctx))
		stop()
	}
	return ss.settle(run, ctx.Err() != nil)
}

// begin claims the session's prompt slot for a new run, cancelling and
// awaiting a run that still holds it.
func (ss *sess) begin(ctx context.Context, msgID string) (*promptRun, error) {
	for {
		ss.mu.Lock()
		if ss.closed {
			ss.mu.Unlock()
			return nil, notFound("session %s is closed", ss.id)
		}
		prev := ss.run
		if prev == nil {
			run := &promptRun{msgID: msgID, done: make(chan struct{})}
			ss.run = run
			ss.mu.Unlock()
			return run, nil
		}
		ss.mu.Unlock()
		ss.cancel(prev)
		select {
		case <-prev.done:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// cancel cancels run's turn (and drops its prompt if the turn has not
// claimed it yet). A run that already answered is left alone.
func (ss *sess) cancel(run *promptRun) {
	ss.mu.Lock()
	if ss.run != run {
		ss.mu.Unlock()
		return
	}
	run.cancelled = true
	ss.mu.Unlock()
	ss.agent.Cancel(session.CancelCause{Kind: agent.CauseUser, Reason: "cancelled by the ACP client"})
}

// settle delivers the run's remaining updates, marks tool calls left
// without a result as failed when the run was cancelled, frees the prompt
// slot and maps the outcome to the answer.
func (ss *sess) settle(run *promptRun, ctxDone bool) (sdk.PromptResponse, error) {
	ss.flush()
	ss.mu.Lock()
	cancelled := run.cancelled || ctxDone
	end := run.end
	ss.mu.Unlock()
	if end == nil && !cancelled {
		// The log refused the turn's start or end (a full disk): say
		// so rather than answer as if the user had cancelled.
		if r, ok := ss.agent.UnloggedEnd(); ok {
			end = &r
		}
	}
	if cancelled {
		ss.out.Push(ss.tr.failOpen("Cancelled before the tool call finished.")...)
		ss.flush()
	}
	ss.release(run)
	return stopReason(end, cancelled)
}

// release frees the prompt slot run holds.
func (ss *sess) release(run *promptRun) {
	ss.mu.Lock()
	ss.run = nil
	ss.mu.Unlock()
	close(run.done)
}

// stopReason maps the prompt's turn end to the answer. An explicit cancel
// wins; a turn that never started (its prompt was dropped) was cancelled.
// max-tokens answers max_tokens, which Zed reports to the user, rather than
// a silent end_turn; a content-filter stop is a refusal.
func stopReason(end *session.TurnEndReason, cancelled bool) (sdk.PromptResponse, error) {
	if cancelled || end == nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	switch end.Kind {
	case session.EndMaxTokens:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTokens}, nil
	case session.EndInterrupted:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case session.EndAborted:
		if end.Reason != nil && (end.Reason.Kind == agent.CauseUser || end.Reason.Kind == agent.CauseDisposed) {
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		}
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case session.EndError:
		if isRefusal(end) {
			// The provider's own words were sent as an agent message.
			return sdk.PromptResponse{StopReason: sdk.StopReasonRefusal}, nil
		}
		msg := "the turn ended with an error"
		if end.Error != nil {
			msg = end.Error.Message
		}
		err := internalError("turn failed: %s", msg)
		if end.Error != nil && end.Error.Code != "" {
			err.Data = map[string]any{"code": end.Error.Code}
		}
		return sdk.PromptResponse{}, err
	default: // completed, blocked
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
}

// isRefusal reports whether a turn ended because the provider's content
// filter stopped the reply, which ACP calls a refusal rather than an error.
func isRefusal(end *session.TurnEndReason) bool {
	return end.Kind == session.EndError && end.Error != nil && end.Error.Code == llm.CodeContentFilter
}

// Cancel is session/cancel: the running prompt answers "cancelled" after
// its final updates. The SDK has already cancelled the prompt's context; an
// unknown session is ignored, as notifications have no answer.
func (s *server) Cancel(_ context.Context, p sdk.CancelNotification) error {
	s.mu.Lock()
	ss, ok := s.sessions[string(p.SessionId)]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	ss.mu.Lock()
	run := ss.run
	ss.mu.Unlock()
	if run != nil {
		ss.cancel(run)
		return nil
	}
	// No prompt: stop whatever the agent still runs on its own.
	ss.agent.Cancel(session.CancelCause{Kind: agent.CauseUser, Reason: "cancelled by the ACP client"})
	return nil
}

// admit turns prompt content into the text of one user message: text as
// is, resource links flattened into a marker line, embedded text resources
// included with their uri. Anything else, and an empty prompt, is invalid.
func admit(blocks []sdk.ContentBlock) (string, error) {
	var b strings.Builder
	for i, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			note := ""
			if strings.HasPrefix(c.ResourceLink.Uri, "zed://") {
				// Zed's own references (@Terminal, @Thread, ...) cannot
				// be opened from here; say so rather than let the model
				// try.
				note = " (an editor reference whose content was not sent)"
			}
			b.WriteString("\n[resource_link name=" + jsonString(c.ResourceLink.Name) + " uri=" + jsonString(c.ResourceLink.Uri) + note + "]\n")
		case c.Resource != nil:
			res := c.Resource.Resource
			if res.TextResourceContents == nil {
				return "", invalidParams("prompt block %d is a binary embedded resource, which is not supported; embed text or send a resource link", i)
			}
			t := res.TextResourceContents
			b.WriteString("\n<context ref=" + jsonString(t.Uri) + ">\n" + strings.TrimSuffix(t.Text, "\n") + "\n</context>\n")
		case c.Image != nil:
			return "", invalidParams("image prompt content is not supported")
		case c.Audio != nil:
			return "", invalidParams("audio prompt content is not supported")
		default:
			return "", invalidParams("prompt block %d has an unknown content type", i)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", invalidParams("empty prompt")
	}
	return b.String(), nil
}

// jsonString quotes s as JSON without HTML escaping.
func jsonString(s string) string {
	return string(session.MustMarshal(s))
}
