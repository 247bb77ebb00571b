package sessionquery

import (
	"context"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// TraceSession returns the lineage around one session from a single corpus
// listing (no log is read): its ancestors nearest first, and the tree of its
// descendants with each child list ordered oldest first. An ancestor outside
// the corpus makes the trace incomplete; a cycle through the target is
// INVALID_LINEAGE. The tree is built without recursion, so depth is bounded
// only by memory.
func (s *Service) TraceSession(ctx context.Context, id string) (LineageTrace, error) {
	records, err := s.listSessions(ctx)
	if err != nil {
		return LineageTrace{}, err
	}
	if err := cancelled(ctx); err != nil {
		return LineageTrace{}, err
	}
	byID := make(map[string]SessionRecord, len(records))
	children := map[string][]SessionRecord{}
	for _, r := range records {
		byID[r.Header.ID] = r
		if p := r.Header.ParentSession; p != nil {
			children[*p] = append(children[*p], r)
		}
	}
	target, ok := byID[id]
	if !ok {
		return LineageTrace{}, notFound(id)
	}

	out := LineageTrace{Target: cloneRecord(target), Ancestors: []SessionRecord{}, Complete: true}
	seen := map[string]bool{id: true}
	root := target
	for cur := target; cur.Header.ParentSession != nil; {
		pid := *cur.Header.ParentSession
		if seen[pid] {
			return LineageTrace{}, Errorf(CodeInvalidLineage, `session lineage contains a cycle at "%s"`, pid)
		}
		parent, ok := byID[pid]
		if !ok {
			out.Complete = false
			out.UnresolvedParentID = &pid
			break
		}
		seen[pid] = true
		out.Ancestors = append(out.Ancestors, cloneRecord(parent))
		root, cur = parent, parent
	}
	if out.Complete {
		r := cloneRecord(root)
		out.Root = &r
	}
	out.Descendants = descendants(id, children)
	return out, nil
}

// descendants builds the nested tree below id. Nodes are discovered breadth
// first and assembled in reverse discovery order, so every child is complete
// before its parent copies it and no call stack grows with depth.
func descendants(id string, children map[string][]SessionRecord) []LineageNode {
	c := collate.New(language.Und)
	for _, kids := range children {
		sortOldestFirst(c, kids)
	}
	order := []string{id}
	visited := map[string]bool{id: true}
	for i := 0; i < len(order); i++ {
		for _, k := range children[order[i]] {
			if !visited[k.Header.ID] {
				visited[k.Header.ID] = true
				order = append(order, k.Header.ID)
			}
		}
	}
	built := make(map[string][]LineageNode, len(order))
	for i := len(order) - 1; i >= 0; i-- {
		nodes := []LineageNode{}
		for _, k := range children[order[i]] {
			sub, ok := built[k.Header.ID]
			if !ok {
				// Already placed elsewhere in the tree; ids are unique, so
				// only a malformed corpus gets here.
				continue
			}
			nodes = append(nodes, LineageNode{Session: cloneRecord(k), Descendants: sub})
			delete(built, k.Header.ID)
		}
		built[order[i]] = nodes
	}
	return built[id]
}

// TraceEvent returns the replacement and source relations of the event at
// seq with the header of the same observation. A missing target is
// EVENT_NOT_FOUND even on a log whose surface is broken; otherwise a fold
// violation is INVALID_SURFACE.
func (s *Service) TraceEvent(ctx context.Context, id string, seq int) (EventTraceObservation, error) {
	src, err := s.load(ctx, id)
	if err != nil {
		return EventTraceObservation{}, err
	}
	if err := cancelled(ctx); err != nil {
		return EventTraceObservation{}, err
	}
	target, err := eventAt(src, id, seq)
	if err != nil {
		return EventTraceObservation{}, err
	}
	f, err := foldEvents(src.events)
	if err != nil {
		return EventTraceObservation{}, err
	}
	return EventTraceObservation{EventTrace: eventTrace(f, src.header.ID, target), Session: src.header.Clone()}, nil
}
