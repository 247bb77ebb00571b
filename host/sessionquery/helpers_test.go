package sessionquery

import (
	"errors"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/session/sessiontest"
)

// ev builds a raw event at seq with time 1000+seq.
func ev(seq int, typ string, data any, opts ...session.AppendOption) session.Event {
	return sessiontest.Event(1000+int64(seq), seq, typ, data, opts...)
}

func userData(blocks ...session.ContentBlock) session.Message {
	return session.Message{Role: session.RoleUser, Content: blocks, Source: session.UserSource, ID: "u"}
}

func userText(text string) session.Message { return userData(session.TextBlock(text)) }

func assistantData(blocks ...session.ContentBlock) session.AssistantMessage {
	return session.AssistantMessage{Message: session.Message{
		Role: session.RoleAssistant, Content: blocks, Source: session.ModelSource("fake", "m"), ID: "a",
	}}
}

func assistantText(text string) session.AssistantMessage {
	return assistantData(session.TextBlock(text))
}

func toolResultData(text string, failure *session.ToolErrorInfo) session.ToolResult {
	var inner []session.ContentBlock
	if text != "" {
		inner = []session.ContentBlock{session.TextBlock(text)}
	}
	return session.ToolResult{
		Message: session.Message{
			Role:    session.RoleUser,
			Content: []session.ContentBlock{session.ToolResultBlock("c1", inner, failure != nil)},
			Source:  session.ToolSource("c1"),
			ID:      "r",
		},
		Error: failure,
	}
}

func turnEnd(kind string) session.TurnEnd {
	return session.TurnEnd{Turn: 0, Reason: session.TurnEndReason{Kind: kind}}
}

func header(id string, createdAt int64) session.Header {
	return session.Header{Version: session.FormatVersion, ID: id, CreatedAt: createdAt}
}

// newLive returns a live session with deterministic event times
// (1000 + seq) whose events were appended through Live.Append.
func newLive(t testing.TB, h session.Header, seed []session.Event) *session.Live {
	t.Helper()
	var tick int64 = int64(1000 + len(seed))
	now := func() time.Time { v := tick; tick++; return time.UnixMilli(v) }
	return session.NewLive(h, seed, session.LiveOptions{Now: now})
}

func mustAppend(t testing.TB, l *session.Live, typ string, data any, opts ...session.AppendOption) session.Event {
	t.Helper()
	e, err := l.Append(typ, data, opts...)
	if err != nil {
		t.Fatalf("append %s: %v", typ, err)
	}
	return e
}

func wantCode(t testing.TB, err error, code string) *Error {
	t.Helper()
	var qe *Error
	if !errors.As(err, &qe) {
		t.Fatalf("error = %v (%T), want *Error with code %s", err, err, code)
	}
	if qe.Code != code {
		t.Fatalf("code = %s (%q), want %s", qe.Code, qe.Message, code)
	}
	return qe
}

func wantError(t testing.TB, err error, code, message string) {
	t.Helper()
	qe := wantCode(t, err, code)
	if qe.Message != message {
		t.Fatalf("message = %q, want %q", qe.Message, message)
	}
}

func ptr[T any](v T) *T { return &v }
