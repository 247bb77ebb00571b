package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// engine is the session-query service with the SQLite index over the
// corpus, as a composition mounts it.
type engine struct {
	st  *store.Store
	reg *session.Registry
	svc *sessionquery.Service
	ix  *searchindex.Index
}

func openEngine(l layout) (*engine, error) {
	e := &engine{st: store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)}), reg: session.NewRegistry()}
	var err error
	if e.svc, err = sessionquery.New(sessionquery.DefaultConfig(), e.reg); err != nil {
		return nil, err
	}
	e.svc.Mount(sessionquery.NewStorePersistence(e.st))
	if e.ix, err = searchindex.New(searchindex.DefaultConfig(l.index), e.svc, searchindex.Options{}); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *engine) close() { _ = e.ix.Close() }

// buildResult is the index build from nothing.
type buildResult struct {
	Seconds   float64 `json:"seconds"`
	Sessions  int     `json:"sessions"`
	Events    int64   `json:"events"`
	SizeBytes int64   `json:"sizeBytes"`
}

// partBuild deletes the index and times opening a new one and bringing it
// up to date with every log, which is what the first search of a new
// install does.
func partBuild(ctx context.Context, l layout, logf func(string, ...any)) (buildResult, error) {
	for _, p := range []string{l.index, l.index + "-wal", l.index + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return buildResult{}, err
		}
	}
	e, err := openEngine(l)
	if err != nil {
		return buildResult{}, err
	}
	defer e.close()
	start := time.Now()
	if err := e.ix.Open(ctx); err != nil {
		return buildResult{}, err
	}
	if err := e.ix.Sync(ctx); err != nil {
		return buildResult{}, err
	}
	d := time.Since(start)
	st, err := e.ix.Status(ctx)
	if err != nil {
		return buildResult{}, err
	}
	logf("indexed %d sessions, %d events in %s (%d MB)", st.Sessions, st.Events, d.Round(time.Millisecond), st.SizeBytes>>20)
	return buildResult{Seconds: d.Seconds(), Sessions: st.Sessions, Events: st.Events, SizeBytes: st.SizeBytes}, nil
}

// searchResult holds the service's search latencies.
type searchResult struct {
	// FirstSearch is opening the index in a fresh process, catching up
	// with the logs and answering one search.
	FirstSearch time.Duration `json:"firstSearch"`
	Queries     []searchQuery `json:"queries"`
}

type searchQuery struct {
	query
	Sessions latency `json:"sessions"`
	// Workspace is SearchSessions restricted to one workspace's sessions,
	// as the TUI's /search and the model's session_search ask.
	Workspace latency `json:"workspace"`
	Events    latency `json:"events"`
	// Hits is the size of the first page of sessions (at most 20).
	Hits int `json:"hits"`
}

// partSearch measures SearchSessions and SearchEvents on the built index,
// with one live session in the service as an editor process would have.
func partSearch(ctx context.Context, l layout, runs int, logf func(string, ...any)) (searchResult, error) {
	var res searchResult
	e, err := openEngine(l)
	if err != nil {
		return res, err
	}
	defer e.close()
	if err := e.attachLiveCopy(ctx); err != nil {
		return res, err
	}
	start := time.Now()
	if _, err := e.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: queries[0].Text}); err != nil {
		return res, err
	}
	res.FirstSearch = time.Since(start)
	page, err := e.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: queries[0].Text})
	if err != nil {
		return res, err
	}
	workspace := ""
	if len(page.Items) > 0 {
		workspace = page.Items[0].Header.CwdOrEmpty()
	}
	for _, q := range queries {
		logf("%s %q", q.Name, q.Text)
		sq := searchQuery{query: q}
		var target string
		sq.Sessions, err = measure(2, runs, func() error {
			p, err := e.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: q.Text})
			if err == nil {
				sq.Hits = len(p.Items)
				if len(p.Items) > 0 {
					target = p.Items[0].Header.ID
				}
			}
			return err
		})
		if err != nil {
			return res, fmt.Errorf("%s: %w", q.Name, err)
		}
		sq.Workspace, err = measure(2, runs, func() error {
			_, err := e.ix.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: q.Text, SessionFilters: []sessionquery.SessionFilter{{Kind: sessionquery.KindCwd, NullableValues: []*string{&workspace}}}})
			return err
		})
		if err != nil {
			return res, fmt.Errorf("%s in one workspace: %w", q.Name, err)
		}
		if target != "" { // a small corpus may lack a planted token
			sq.Events, err = measure(2, runs, func() error {
				_, err := e.ix.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: target, Query: q.Text})
				return err
			})
			if err != nil {
				return res, fmt.Errorf("%s events: %w", q.Name, err)
			}
		}
		res.Queries = append(res.Queries, sq)
	}
	return res, nil
}

// attachLiveCopy puts an in-memory copy of one persisted session, under a
// new id, in the live registry.
func (e *engine) attachLiveCopy(ctx context.Context) error {
	entries, err := e.st.List(ctx)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("the corpus is empty")
	}
	h, events, err := e.st.Inspect(ctx, entries[len(entries)/3].Header.ID)
	if err != nil {
		return err
	}
	h.ID = "live-" + h.ID
	return e.reg.Attach(session.NewLive(h, events, session.LiveOptions{}))
}

// reconcileResult is the cost of bringing the index up to date.
type reconcileResult struct {
	NoChange latency `json:"noChange"`
	// SmallChange follows one 100-event turn appended and flushed to one
	// log.
	SmallChange latency `json:"smallChange"`
}

// partReconcile times Sync with nothing changed, then after each of
// several 100-event turns appended to a scratch session (removed again
// afterwards, so the corpus stays as generated).
func partReconcile(ctx context.Context, l layout, logf func(string, ...any)) (reconcileResult, error) {
	var res reconcileResult
	e, err := openEngine(l)
	if err != nil {
		return res, err
	}
	defer e.close()
	if err := e.ix.Sync(ctx); err != nil {
		return res, err
	}
	if res.NoChange, err = measure(3, 51, func() error { return e.ix.Sync(ctx) }); err != nil {
		return res, err
	}
	cwd := "/home/dev/src/dsh"
	h := session.Header{Version: session.FormatVersion, ID: fmt.Sprintf("dshbench-scratch-%d", time.Now().UnixNano()), CreatedAt: time.Now().UnixMilli(), Cwd: &cwd}
	w, err := e.st.Create(h, nil)
	if err != nil {
		return res, err
	}
	defer func() {
		_ = w.Close()
		_ = os.RemoveAll(filepath.Dir(w.Path()))
	}()
	if err := e.ix.Sync(ctx); err != nil {
		return res, err
	}
	next, turn := 0, 0
	var samples []time.Duration
	for range 11 {
		batch := turnOf100(next, turn, h.CreatedAt+int64(next))
		if err := w.Append(batch...); err != nil {
			return res, err
		}
		if err := w.Flush(); err != nil {
			return res, err
		}
		next += len(batch)
		turn++
		start := time.Now()
		if err := e.ix.Sync(ctx); err != nil {
			return res, err
		}
		samples = append(samples, time.Since(start))
	}
	res.SmallChange = percentiles(samples)
	logf("no change p50 %s, +100 events p50 %s", res.NoChange.P50, res.SmallChange.P50)
	return res, nil
}

// turnOf100 is one complete turn of 100 events starting at seq next: a
// prompt, 94 streamed chunks and the answer.
func turnOf100(next, turn int, t int64) []session.Event {
	var out []session.Event
	add := func(typ string, data any) {
		t++
		e := session.Event{Type: typ, Seq: next + len(out), Time: t, Data: session.MustMarshal(data)}
		if session.IsSurfaceType(typ) {
			e.SurfaceOp = session.OpAppend
		}
		out = append(out, e)
	}
	add(session.TypeTurnStart, session.TurnStart{Turn: turn})
	add(session.TypeUserMessage, session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock("why does the cache test flake on CI again")}, Source: session.UserSource, ID: fmt.Sprintf("bench-u-%d", next)})
	add(session.TypeStepStart, session.StepBoundary{Turn: turn, Step: 0})
	for i := range 94 {
		add(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: 0, Chunk: session.MustMarshal(map[string]string{"type": "text-delta", "text": fmt.Sprintf("word%d ", i)})})
	}
	add(session.TypeAssistantMessage, session.AssistantMessage{Turn: turn, Step: 0, Message: session.Message{Role: session.RoleAssistant, Content: []session.ContentBlock{session.TextBlock("the cache test races with the eviction timer")}, Source: session.ModelSource("bench", "m"), ID: fmt.Sprintf("bench-a-%d", next)}})
	add(session.TypeStepEnd, session.StepBoundary{Turn: turn, Step: 0})
	add(session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.EndCompleted}})
	return out
}
