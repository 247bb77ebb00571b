package sessiontest

import "github.com/seed-e9b4dba4/dsh/host/session"

// Event builds a raw event at seq written at time at (milliseconds), its
// data encoded with session.MustMarshal; surface events append.
func Event(at int64, seq int, typ string, data any, opts ...session.AppendOption) session.Event {
	e := session.Event{Type: typ, Seq: seq, Time: at, Data: session.MustMarshal(data)}
	if session.IsSurfaceType(typ) {
		e.SurfaceOp = session.OpAppend
	}
	for _, o := range opts {
		o(&e)
	}
	return e
}

// UserText is a user message of one text block.
func UserText(text string) session.Message {
	return session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(text)}, Source: session.UserSource, ID: "u"}
}
