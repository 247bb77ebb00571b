package sessionquery

import "github.com/seed-e9b4dba4/dsh/host/session"

// Filter kinds.
const (
	KindID           = "id"
	KindCwd          = "cwd"
	KindCreatedAt    = "created-at"
	KindParent       = "parent"
	KindAvailability = "availability"
	KindSeq          = "seq"
	KindTime         = "time"
	KindType         = "type"
	KindSurface      = "surface"
	KindText         = "text"
)

// Availability values.
const (
	AvailabilityLive      = "live"
	AvailabilityPersisted = "persisted"
)

// SessionFilter is one clause over session records:
//
//	id           Values
//	cwd, parent  NullableValues (nil entry = absent field)
//	created-at   From, To (inclusive, either may be nil)
//	availability Values ("live" | "persisted")
//
// Values nil and empty differ only for validation ("must be an array");
// an empty list matches nothing.
type SessionFilter struct {
	Kind           string
	Values         []string
	NullableValues []*string
	From, To       *float64
}

// EventFilter is one clause over event documents:
//
//	seq, time  From, To (inclusive)
//	type       Values (open set)
//	surface    Values ("current" | "shadowed" | "log-only")
//	text       Text (literal, case-insensitive, whitespace-flexible scan;
//	           not accepted by search)
type EventFilter struct {
	Kind     string
	Values   []string
	From, To *float64
	Text     string
}

// SessionSearchRequest searches the corpus grouped by session.
type SessionSearchRequest struct {
	Query          string
	SessionFilters []SessionFilter
	EventFilters   []EventFilter
	Limit          *int
	Cursor         *string
}

// EventSearchRequest searches one session.
type EventSearchRequest struct {
	SessionID string
	Query     string
	Filters   []EventFilter
	Limit     *int
	Cursor    *string
}

// EventHit is one matching event.
type EventHit struct {
	EventRecord
	Snippet string `json:"snippet"`
}

// SessionHit is one matching session with its strongest event.
type SessionHit struct {
	SessionRecord
	BestMatch EventHit `json:"bestMatch"`
}

// SessionSearchPage is a page of session hits. NextCursor is nil on the last
// page.
type SessionSearchPage struct {
	Items      []SessionHit `json:"items"`
	NextCursor *string      `json:"nextCursor,omitempty"`
}

// EventSearchPage is a page of event hits with the target header from the
// same indexed generation (returned even when there are no hits).
type EventSearchPage struct {
	Items      []EventHit     `json:"items"`
	NextCursor *string        `json:"nextCursor,omitempty"`
	Session    session.Header `json:"session"`
}

// WorkspaceFilter is the cwd clause that keeps the sessions of ws: those
// whose stored cwd is exactly one of its forms (session.Workspace.Holds).
func WorkspaceFilter(ws session.Workspace) SessionFilter {
	forms := ws.Forms()
	values := make([]*string, len(forms))
	for i := range forms {
		values[i] = &forms[i]
	}
	return SessionFilter{Kind: KindCwd, NullableValues: values}
}
