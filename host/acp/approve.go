package acp

import (
	"context"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Permission option ids offered with every session/request_permission.
const (
	optionAllowOnce   = "allow-once"
	optionAllowAlways = "allow-always"
	optionReject      = "reject-once"
)

// approver answers the permission policy's asks for the connection's
// sessions through session/request_permission; other calls go to the
// approver that was installed before (none: rejected).
type approver struct {
	s    *server
	next tools.Approver
}

// Approve shows the call (after every update queued before it, so the
// client already knows the call) and maps the user's answer. "Allow
// always" is remembered by the permissions service for this session and
// tool. A failed request fails closed; when the turn is being cancelled the
// error is the cancellation, which the pipeline treats as an abort.
func (ap *approver) Approve(ctx context.Context, call *tools.Call, reason string) (string, error) {
	ss, ok := ap.s.owns(call)
	if !ok {
		if ap.next != nil {
			return ap.next.Approve(ctx, call, reason)
		}
		return tools.Rejected, nil
	}
	if err := ss.out.Flush(ctx); err != nil {
		return tools.Cancelled, err
	}
	view := presentFor(ap.s.b.Tools, call, ss.tr.buffers)
	title := view.Title
	if call.Sandbox != nil {
		// Asked after the call ran sandboxed: whether to run it again
		// outside the sandbox, which the editor must show as such.
		title = "Run outside the sandbox? " + title
	}
	tc := sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId(call.CallID),
		Title:      sdk.Ptr(title),
		Kind:       sdk.Ptr(sdk.ToolKind(view.Kind)),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
		Locations:  locations(view.Locations),
		RawInput:   shownInput(view.RawInput),
	}
	if view.Diff != nil {
		tc.Content = []sdk.ToolCallContent{shownDiff(view.Diff)}
	}
	if reason != "" {
		tc.Meta = map[string]any{"dsh": map[string]any{"reason": reason}}
	}
	if call.Sandbox != nil && reason != "" {
		tc.Content = append(tc.Content, sdk.ToolContent(sdk.TextBlock(reason)))
	}
	resp, err := ap.s.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(ss.id),
		ToolCall:  tc,
		Options: []sdk.PermissionOption{
			{OptionId: optionAllowOnce, Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optionAllowAlways, Name: "Allow always in this session", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: optionReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return tools.Cancelled, context.Cause(ctx)
		}
		ap.s.log.Warn("acp: permission request failed; rejecting the call", "session", ss.id, "tool", call.Name, "err", err)
		return tools.Rejected, fmt.Errorf("the editor did not answer the permission request: %w", err)
	}
	switch {
	case resp.Outcome.Cancelled != nil:
		return tools.Cancelled, nil
	case resp.Outcome.Selected == nil:
		return tools.Rejected, nil
	}
	switch resp.Outcome.Selected.OptionId {
	case optionAllowOnce:
		return tools.AllowedOnce, nil
	case optionAllowAlways:
		return tools.AllowedAlways, nil
	default:
		return tools.Rejected, nil
	}
}
