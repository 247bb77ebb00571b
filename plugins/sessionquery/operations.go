package sessionquery

import (
	"context"

	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// The five tool bodies. Their step order is observable (which error wins,
// which service calls happen) and follows session-query.md §4.4 exactly.

func (t *toolset) sessionSearch(ctx context.Context, c *tools.Call) (any, error) {
	a, err := callArgs(c)
	if err != nil {
		return nil, err
	}
	x, err := t.begin(ctx, c)
	if err != nil {
		return nil, err
	}
	if x.cwd() == nil {
		return nil, noWorkspace()
	}
	req, parents, includeRoot, err := sessionSearchRequest(a)
	if err != nil {
		return nil, err
	}
	if len(parents) > 0 || includeRoot {
		allowed, err := x.authorizeSessionIDs(parents)
		if err != nil {
			return nil, err
		}
		values := []*string{}
		for _, p := range parents {
			if allowed[p] {
				values = append(values, &p)
			}
		}
		if includeRoot {
			values = append(values, nil)
		}
		if len(values) == 0 {
			// Nothing requested is visible: searching without the clause
			// would widen the query, so the answer is empty, exactly as if
			// the hidden ids had never been named.
			return noSessionMatches, nil
		}
		req.SessionFilters = append(req.SessionFilters, sq.SessionFilter{Kind: sq.KindParent, NullableValues: values})
	}
	req.SessionFilters = append(req.SessionFilters, x.cwdFilter())

	hits, capped, err := collectPages(x.ctx, t.cfg.MaxSearchResults,
		func(cursor *string) ([]sq.SessionHit, *string, error) {
			r := req
			r.Cursor = cursor
			page, err := call(x.ctx, x.b, opSessionSearch, func(ctx context.Context) (sq.SessionSearchPage, error) {
				return x.b.svc.SearchSessions(ctx, r)
			})
			return page.Items, page.NextCursor, err
		},
		func(h sq.SessionHit) bool { return h.Header.ID != x.caller.id && x.headerAuthorized(h.Header) })
	if err != nil {
		return nil, err
	}
	// Zero hits still make the (empty) title batch call, as the design's
	// steps 10-12 do, so a failing title batch fails the call either way.
	var parentIDs, ids []string
	for _, h := range hits {
		ids = append(ids, h.Header.ID)
		if p := h.Header.ParentSession; p != nil {
			parentIDs = append(parentIDs, *p)
		}
	}
	visibleParents, err := x.authorizeSessionIDs(parentIDs)
	if err != nil {
		return nil, err
	}
	titles, err := x.readTitles(ids)
	if err != nil {
		return nil, err
	}
	return renderSessionSearch(hits, capped, titles, visibleParents), nil
}

// sessionSearchRequest validates every argument of session_search before
// any service call, in the order of §4.4.1 steps 3-6, and returns the
// request without its parent and cwd clauses, plus the deduplicated parent
// ids.
func sessionSearchRequest(a args) (sq.SessionSearchRequest, []string, bool, error) {
	var req sq.SessionSearchRequest
	q, _, err := a.str("query")
	if err != nil {
		return req, nil, false, err
	}
	if req.Query, err = normalizeQuery(q); err != nil {
		return req, nil, false, err
	}
	ids, ok, err := a.list("session_ids", "session_ids")
	if err != nil {
		return req, nil, false, err
	}
	if ok {
		req.SessionFilters = append(req.SessionFilters, sq.SessionFilter{Kind: sq.KindID, Values: ids})
	}
	from, to, err := a.timeRange("created_at_from", "created_at_to", "created_at_from", "created_at_to", "created_at")
	if err != nil {
		return req, nil, false, err
	}
	if from != nil || to != nil {
		req.SessionFilters = append(req.SessionFilters, sq.SessionFilter{Kind: sq.KindCreatedAt, From: from, To: to})
	}
	avail, ok, err := a.list("availability", "availability")
	if err != nil {
		return req, nil, false, err
	}
	if ok {
		req.SessionFilters = append(req.SessionFilters, sq.SessionFilter{Kind: sq.KindAvailability, Values: avail})
	}
	seqFrom, seqTo, err := a.seqRange("event_seq_from", "event_seq_to")
	if err != nil {
		return req, nil, false, err
	}
	if req.EventFilters, err = eventFilters(a, seqFrom, seqTo, "event_time_from", "event_time_to", "event_surfaces"); err != nil {
		return req, nil, false, err
	}
	parents, ok, err := a.list("parent_session_ids", "parent_session_ids")
	if err != nil {
		return req, nil, false, err
	}
	includeRoot, err := a.boolean("include_root_sessions")
	if err != nil {
		return req, nil, false, err
	}
	if ok {
		parents = dedupe(parents)
	}
	return req, parents, includeRoot, nil
}

// eventFilters builds the metadata clauses in the order seq, time, type,
// surface. The time arguments are reported as time_from/time_to and an empty
// surface list as "surfaces", whatever the tool calls them.
func eventFilters(a args, seqFrom, seqTo *int, timeFrom, timeTo, surfaces string) ([]sq.EventFilter, error) {
	var out []sq.EventFilter
	if seqTo != nil && *seqTo < 0 {
		// Only the current-step bound can get here: a caller whose last
		// step/start has seq 0.
		return nil, invalidFilter("sequence upper bound must be a non-negative safe integer")
	}
	if seqFrom != nil || seqTo != nil {
		out = append(out, seqFilter(seqFrom, seqTo))
	}
	from, to, err := a.timeRange(timeFrom, timeTo, "time_from", "time_to", "time")
	if err != nil {
		return nil, err
	}
	if from != nil || to != nil {
		out = append(out, sq.EventFilter{Kind: sq.KindTime, From: from, To: to})
	}
	types, ok, err := a.list("event_types", "event_types")
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, sq.EventFilter{Kind: sq.KindType, Values: types})
	}
	surf, ok, err := a.list(surfaces, "surfaces")
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, sq.EventFilter{Kind: sq.KindSurface, Values: surf})
	}
	return out, nil
}

func (t *toolset) eventSearch(ctx context.Context, c *tools.Call) (any, error) {
	a, err := callArgs(c)
	if err != nil {
		return nil, err
	}
	x, target, err := t.beginTargeted(ctx, c, a)
	if err != nil {
		return nil, err
	}
	q, _, err := a.str("query")
	if err != nil {
		return nil, err
	}
	query, err := normalizeQuery(q)
	if err != nil {
		return nil, err
	}
	from, to, err := a.seqRange("seq_from", "seq_to")
	if err != nil {
		return nil, err
	}
	if target == x.caller.id {
		bound, err := x.currentStepBound()
		if err != nil {
			return nil, err
		}
		if to == nil || *to > bound {
			to = &bound
		}
	}
	titles, err := x.readTitles([]string{target})
	if err != nil {
		return nil, err
	}
	title := titles[target]
	// A range emptied by the current-step bound is answered without a
	// search, and the remaining filters are deliberately not validated on
	// this path. A step at seq 0 with no seq_from leaves to = -1, which the
	// seq clause rejects below (session-query.md §8 item 6: matching
	// upstream means throwing).
	if from != nil && to != nil && *from > *to {
		return renderEventSearch(target, title, nil, false), nil
	}
	filters, err := eventFilters(a, from, to, "time_from", "time_to", "surfaces")
	if err != nil {
		return nil, err
	}
	req := sq.EventSearchRequest{SessionID: target, Query: query, Filters: filters}
	hits, capped, err := collectPages(x.ctx, t.cfg.MaxSearchResults,
		func(cursor *string) ([]sq.EventHit, *string, error) {
			r := req
			r.Cursor = cursor
			page, err := call(x.ctx, x.b, opEventSearch, func(ctx context.Context) (sq.EventSearchPage, error) {
				return x.b.svc.SearchEvents(ctx, r)
			})
			if err != nil {
				return nil, nil, err
			}
			if err := x.assertObserved(target, page.Session); err != nil {
				return nil, nil, err
			}
			return page.Items, page.NextCursor, nil
		},
		func(sq.EventHit) bool { return true })
	if err != nil {
		return nil, err
	}
	return renderEventSearch(target, title, hits, capped), nil
}

func (t *toolset) sessionTrace(ctx context.Context, c *tools.Call) (any, error) {
	a, err := callArgs(c)
	if err != nil {
		return nil, err
	}
	x, target, err := t.beginTargeted(ctx, c, a)
	if err != nil {
		return nil, err
	}
	trace, err := call(x.ctx, x.b, opLineageTrace, func(ctx context.Context) (sq.LineageTrace, error) {
		return x.b.svc.TraceSession(ctx, target)
	})
	if err != nil {
		return nil, err
	}
	if err := x.assertObserved(target, trace.Target.Header); err != nil {
		return nil, err
	}
	visible := x.pruneLineage(trace)
	titles, err := x.readTitles(visible.ids(target))
	if err != nil {
		return nil, err
	}
	return renderLineage(trace.Target, visible, titles), nil
}

func (t *toolset) eventTrace(ctx context.Context, c *tools.Call) (any, error) {
	a, err := callArgs(c)
	if err != nil {
		return nil, err
	}
	seq, err := a.requiredInt("seq")
	if err != nil {
		return nil, err
	}
	x, target, err := t.beginTargeted(ctx, c, a)
	if err != nil {
		return nil, err
	}
	trace, err := call(x.ctx, x.b, opEventTrace, func(ctx context.Context) (sq.EventTraceObservation, error) {
		return x.b.svc.TraceEvent(ctx, target, seq)
	})
	if err != nil {
		return nil, err
	}
	if err := x.assertObserved(target, trace.Session); err != nil {
		return nil, err
	}
	titles, err := x.readTitles([]string{target})
	if err != nil {
		return nil, err
	}
	return renderEventTrace(target, titles[target], trace.EventTrace), nil
}

func (t *toolset) eventRead(ctx context.Context, c *tools.Call) (any, error) {
	a, err := callArgs(c)
	if err != nil {
		return nil, err
	}
	seq, err := a.requiredInt("seq")
	if err != nil {
		return nil, err
	}
	before, err := a.intArg("before", "before")
	if err != nil {
		return nil, err
	}
	after, err := a.intArg("after", "after")
	if err != nil {
		return nil, err
	}
	x, target, err := t.beginTargeted(ctx, c, a)
	if err != nil {
		return nil, err
	}
	window, err := call(x.ctx, x.b, opEventRead, func(ctx context.Context) (sq.EventWindow, error) {
		return x.b.svc.ReadEvent(ctx, target, seq, before, after)
	})
	if err != nil {
		return nil, err
	}
	if err := x.assertObserved(target, window.Session); err != nil {
		return nil, err
	}
	titles, err := x.readTitles([]string{target})
	if err != nil {
		return nil, err
	}
	out, err := renderEventRead(target, titles[target], window)
	if err != nil {
		// The payload came from the trusted service; its encoding error
		// is a service failure like any other.
		return nil, x.b.sanitize(x.ctx, opEventRead, err)
	}
	return out, nil
}

// collectPages drains a provider's pages into at most max accepted items.
// capped is true only when one more accepted item exists beyond max, so the
// cap line never promises matches that are not there. A cursor the provider
// already returned in this call would loop forever; that is the tool's own
// finding, reported outside the sanitizer.
func collectPages[T any](ctx context.Context, max int, fetch func(cursor *string) ([]T, *string, error), accept func(T) bool) ([]T, bool, error) {
	var out []T
	seen := map[string]bool{}
	var cursor *string
	for {
		if ctx.Err() != nil {
			return nil, false, context.Cause(ctx)
		}
		items, next, err := fetch(cursor)
		if err != nil {
			return nil, false, err
		}
		if ctx.Err() != nil {
			return nil, false, context.Cause(ctx)
		}
		for _, it := range items {
			if !accept(it) {
				continue
			}
			if len(out) >= max {
				return out, true, nil
			}
			out = append(out, it)
		}
		if next == nil {
			return out, false, nil
		}
		if seen[*next] {
			return nil, false, &sq.Error{Code: sq.CodeInvalidCursor, Message: "session-search provider repeated a continuation cursor"}
		}
		seen[*next] = true
		c := *next
		cursor = &c
	}
}
