package session

import "fmt"

// DeriveMessages folds events and returns the model history they imply
// (host.md §2.7): the current surface nodes in order, each projected by
// EventMessage. An invalid log is an error (a *FoldError or a payload that
// does not decode), never a silently shortened history.
func DeriveMessages(events []Event) ([]Message, error) {
	f, err := Fold(events)
	if err != nil {
		return nil, err
	}
	return f.Messages()
}

// Messages returns the model history of the folded log; see DeriveMessages.
func (f *SurfaceFold) Messages() ([]Message, error) {
	out := make([]Message, 0, len(f.nodes))
	for _, seq := range f.nodes {
		m, ok, err := EventMessage(f.events[seq])
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// EventMessage projects one surface event to the message it contributes:
// user/message is the message itself; assistant/message is its message,
// except that an empty one (it only hosts the usage of a max-tokens step)
// contributes nothing; tool/result is its user-role message carrying the
// tool-result block. Every other type contributes nothing.
func EventMessage(e Event) (Message, bool, error) {
	switch e.Type {
	case TypeUserMessage:
		var m Message
		if err := e.DecodeData(&m); err != nil {
			return Message{}, false, err
		}
		return m, true, nil
	case TypeAssistantMessage:
		var a AssistantMessage
		if err := e.DecodeData(&a); err != nil {
			return Message{}, false, err
		}
		if len(a.Message.Content) == 0 {
			return Message{}, false, nil
		}
		return a.Message, true, nil
	case TypeToolResult:
		var r ToolResult
		if err := e.DecodeData(&r); err != nil {
			return Message{}, false, err
		}
		if len(r.Message.Content) == 0 {
			return Message{}, false, fmt.Errorf("event %d (%s): message has no tool-result block", e.Seq, e.Type)
		}
		return r.Message, true, nil
	default:
		return Message{}, false, nil
	}
}

// LastStepStart returns the seq of the last step/start in events, or -1.
// The step it opens is the one running a tool call that reads this log, so
// the session-query tools treat it as the boundary of the caller's current
// step (session-query.md §1.8).
func LastStepStart(events []Event) int {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == TypeStepStart {
			return events[i].Seq
		}
	}
	return -1
}
