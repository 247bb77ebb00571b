package tui

import (
	"context"
	"maps"
	"slices"
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

// summariesFor returns c (a new catalog when nil) with what a list of
// headers needs beside their titles: the summaries of the headers'
// workspaces it lacks, one catalog read for them all, and the titles of
// their forks' parents that are still missing. Its cost follows the
// sessions shown and their workspaces, not the whole history. A failed
// read leaves the rows to show what they have (creation times, bare ids).
func summariesFor(ctx context.Context, q Query, c catalog, headers []session.Header) catalog {
	out := maps.Clone(c)
	if out == nil {
		out = catalog{}
	}
	var cwds []string
	for _, h := range headers {
		if _, ok := out[h.ID]; !ok && h.Cwd != nil && !slices.Contains(cwds, *h.Cwd) {
			cwds = append(cwds, *h.Cwd)
		}
	}
	if len(cwds) > 0 {
		if page, err := q.ListSummaries(ctx, sessionquery.SummaryRequest{Cwds: cwds}); err == nil {
			for _, s := range page.Items {
				out[s.Header.ID] = s
			}
		}
	}
	return out.withParents(ctx, q, headers)
}

// withParents adds the titles of the parents of headers' forks that c
// lacks (a summary holding the parent's header and title alone).
func (c catalog) withParents(ctx context.Context, q Query, headers []session.Header) catalog {
	var ids []string
	for _, h := range headers {
		if p := h.ParentSession; p != nil && !slices.Contains(ids, *p) {
			if _, ok := c[*p]; !ok {
				ids = append(ids, *p)
			}
		}
	}
	if len(ids) == 0 {
		return c
	}
	titles, err := q.ReadTitleSnapshots(ctx, ids)
	if err != nil {
		return c // the fork rows name their parents by id alone
	}
	for _, t := range titles {
		if t.Status == sessionquery.Fulfilled && t.Value != nil {
			c[t.SessionID] = sessionquery.SessionSummary{Header: t.Value.Session, Title: t.Value.Title}
		}
	}
	return c
}
