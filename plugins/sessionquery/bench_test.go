package sessionquery

import (
	"context"
	"fmt"
	"testing"

	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// BenchmarkSessionSearchDrain measures one session_search that drains ten
// 20-hit pages to the 100-result cap, with parent authorization and one
// title batch, through the whole tool pipeline.
func BenchmarkSessionSearchDrain(b *testing.B) {
	c := &corpus{}
	c.add(hdr("caller", 1, workspace, ""), "")
	c.add(hdr("parent", 2, workspace, ""), "Parent")
	var pages [][]sq.SessionHit
	for p := range 10 {
		var items []sq.SessionHit
		for i := range 20 {
			h := hdr(fmt.Sprintf("s-%d-%d", p, i), int64(p*20+i), workspace, "parent")
			c.add(h, "Title")
			items = append(items, sessionHit(h, true, true, "a snippet around the needle"))
		}
		pages = append(pages, items)
	}
	f := newFake(b).serve(c)
	f.searchSessions = func(_ context.Context, req sq.SessionSearchRequest) (sq.SessionSearchPage, error) {
		n := 0
		if req.Cursor != nil {
			fmt.Sscanf(*req.Cursor, "p%d", &n)
		}
		page := sq.SessionSearchPage{Items: pages[n]}
		if n+1 < len(pages) {
			next := fmt.Sprintf("p%d", n+1)
			page.NextCursor = &next
		}
		return page, nil
	}
	ts := &toolset{b: &boundary{svc: f, log: discardLogger()}, cfg: DefaultConfig()}
	h := &harness{reg: newRegistryWith(b, ts)}
	caller := callerLive("caller", workspace)
	b.ReportAllocs()
	for b.Loop() {
		f.mu.Lock()
		f.calls = f.calls[:0]
		f.mu.Unlock()
		if r := h.run(context.Background(), caller, ToolSessionSearch, `{"query":"needle"}`); r.IsError {
			b.Fatal(r.Content[0].Text)
		}
	}
}

// BenchmarkDeepLineage renders a 3000-deep descendant chain.
func BenchmarkDeepLineage(b *testing.B) {
	var node []sq.LineageNode
	for i := 3000; i >= 1; i-- {
		node = []sq.LineageNode{{Session: sq.SessionRecord{Header: hdr(fmt.Sprintf("deep-%d", i), int64(i), workspace, ""), Live: true}, Descendants: node}}
	}
	target := sq.SessionRecord{Header: hdr("caller", 1, workspace, ""), Live: true}
	trace := sq.LineageTrace{Target: target, Descendants: node, Complete: true, Root: &target}
	x := &execution{caller: caller{id: "caller", header: target.Header}}
	titles := map[string]titleView{}
	b.ReportAllocs()
	for b.Loop() {
		v := x.pruneLineage(trace)
		_ = renderLineage(trace.Target, v, titles)
	}
}
