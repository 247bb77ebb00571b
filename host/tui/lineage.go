package tui

import (
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// catalog is the session catalog by id, for what the lists show beside a
// title: when a session last changed and which session it was forked from.
type catalog map[string]sessionquery.SessionSummary

func catalogOf(items []sessionquery.SessionSummary) catalog {
	c := make(catalog, len(items))
	for _, s := range items {
		c[s.Header.ID] = s
	}
	return c
}

// lastActivity is when h's session last changed: its last event or title
// update, else its creation.
func (c catalog) lastActivity(h session.Header) time.Time {
	at := h.CreatedAt
	if s, ok := c[h.ID]; ok {
		at = max(at, s.UpdatedAt())
	}
	return time.UnixMilli(at)
}

// forkOf names the session h was forked from ("" for a root session): its
// short id, and its title when that differs from the fork's own (a fork
// inherits its parent's title until it gets one of its own).
func (c catalog) forkOf(h session.Header, title string) string {
	if h.ParentSession == nil {
		return ""
	}
	parent := *h.ParentSession
	out := "fork of " + shortID(parent)
	if p, ok := c[parent]; ok && p.Title != nil && p.Title.Title != title {
		out += " " + oneLine(p.Title.Title)
	}
	return out
}
