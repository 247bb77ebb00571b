package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

// summaryLister is the part of the session-query service that lists the
// session catalog.
type summaryLister interface {
	ListSummaries(ctx context.Context, req sessionquery.SummaryRequest) (sessionquery.SummaryPage, error)
}

// maxCandidates is how many sessions an ambiguous prefix lists.
const maxCandidates = 10

// resolveSession finds the session an id or a unique id prefix names,
// across every workspace: an exact id wins, a prefix must match exactly one
// session. No match is a failure (exit 1); an ambiguous prefix is a usage
// error (exit 2) that lists the candidates.
func resolveSession(ctx context.Context, q summaryLister, arg string) (sessionquery.SessionSummary, error) {
	// Only the id's matches are read, not the whole catalog.
	page, err := q.ListSummaries(ctx, sessionquery.SummaryRequest{IDPrefix: arg})
	if err != nil {
		return sessionquery.SessionSummary{}, err
	}
	var matches []sessionquery.SessionSummary
	for _, s := range page.Items {
		if s.Header.ID == arg {
			return s, nil
		}
		if arg != "" && strings.HasPrefix(s.Header.ID, arg) {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 0:
		return sessionquery.SessionSummary{}, fmt.Errorf("no session id starts with %q; dsh sessions list --all-workspaces shows every session", arg)
	case 1:
		return matches[0], nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions start with %q; give more of the id:", len(matches), arg)
	for i, s := range matches {
		if i == maxCandidates {
			fmt.Fprintf(&b, "\n  … and %d more", len(matches)-maxCandidates)
			break
		}
		title := "untitled"
		if s.Title != nil {
			title = oneLine(s.Title.Title, 50)
		}
		fmt.Fprintf(&b, "\n  %s  %s  %s  %s", termtext.Line(s.Header.ID), formatTime(s.Header.CreatedAt), title, termtext.Line(workspaceOf(s.Header)))
	}
	return sessionquery.SessionSummary{}, exitCodeError{code: exitUsage, err: fmt.Errorf("%s", b.String())}
}

// lastSession is the session of workspace cwd that changed last.
func lastSession(ctx context.Context, q summaryLister, cwd string) (sessionquery.SessionSummary, error) {
	ws, err := session.ResolveWorkspace(cwd)
	if err != nil {
		return sessionquery.SessionSummary{}, err
	}
	page, err := q.ListSummaries(ctx, sessionquery.SummaryRequest{Cwds: ws.Forms()})
	if err != nil {
		return sessionquery.SessionSummary{}, err
	}
	var last sessionquery.SessionSummary
	found := false
	for _, s := range page.Items {
		if s.Unreadable != "" || s.Invalid != "" || s.Events == 0 {
			continue
		}
		if !found || s.UpdatedAt() > last.UpdatedAt() {
			last, found = s, true
		}
	}
	if !found {
		return last, fmt.Errorf("no session to continue in %s; run dsh to start one (dsh sessions list --all-workspaces shows the others)", cwd)
	}
	return last, nil
}
