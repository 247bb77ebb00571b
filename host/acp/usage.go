package acp

import (
	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Context use reaches the client as usage_update (unstable in the pinned
// ACP schema, but in the SDK's types, which Zed reads): after every model
// step of a turn, and once when a session is loaded or resumed. Used is
// what the last model call held (its input, cache hits included, plus its
// reply), size the model's context window. An update is sent only when the
// window is known. dsh has no price table and the providers it speaks to
// report no cost in the stream, so cost is never sent.

// usageTracker follows the request/context and assistant/message events of
// one session.
type usageTracker struct {
	// window resolves a model's context window: the logged value when
	// there is one, else the catalog's; 0 when unknown.
	window func(model string, logged int) int
	model  string
	logged int
}

// observe takes one event and returns the usage after it, if it ended a
// model step with usage.
func (u *usageTracker) observe(e session.Event) (sdk.SessionUsageUpdate, bool) {
	switch e.Type {
	case session.TypeRequestContext:
		var d session.RequestContext
		if e.DecodeData(&d) == nil {
			u.model, u.logged = d.Model, d.ContextWindow
		}
	case session.TypeAssistantMessage:
		var d session.AssistantMessage
		// Step 0 is a compaction's summary call, not the conversation.
		if e.DecodeData(&d) != nil || d.Usage == nil || d.Step == 0 || u.window == nil {
			return sdk.SessionUsageUpdate{}, false
		}
		size := u.window(u.model, u.logged)
		if size <= 0 {
			return sdk.SessionUsageUpdate{}, false
		}
		used := d.Usage.InputTokens + d.Usage.CacheReadTokens + d.Usage.OutputTokens
		return sdk.SessionUsageUpdate{Used: used, Size: size}, true
	}
	return sdk.SessionUsageUpdate{}, false
}

// usageOf is the context use after the last model step of events.
func usageOf(events []session.Event, window func(model string, logged int) int) (sdk.SessionUsageUpdate, bool) {
	t := usageTracker{window: window}
	var last sdk.SessionUsageUpdate
	found := false
	for _, e := range events {
		if u, ok := t.observe(e); ok {
			last, found = u, true
		}
	}
	return last, found
}

// contextWindow is the window of model: the one its request logged, else
// the catalog's.
func (s *server) contextWindow(model string, logged int) int {
	if logged > 0 {
		return logged
	}
	return s.modelInfo(model).ContextWindow
}

func usageUpdate(u sdk.SessionUsageUpdate) sdk.SessionUpdate {
	return sdk.SessionUpdate{UsageUpdate: &u}
}
