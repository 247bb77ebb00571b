package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	sqtools "github.com/seed-e9b4dba4/dsh/plugins/sessionquery"
)

// toolResult is session_search end to end: the model-facing plugin on an
// ACP runtime over the corpus home, called through tools.Registry.Run as
// the agent loop calls it (permissions, timeout and spill policies
// included), beside the service's SearchSessions of the same query in the
// same runtime and the same conditions.
type toolResult struct {
	// Workspace is the caller's cwd: the one holding the rare id.
	Workspace string      `json:"workspace"`
	Startup   float64     `json:"startupSeconds"`
	Queries   []toolQuery `json:"queries"`
}

// toolQuery is one query in two conditions. Fresh: the caller's session
// grew by one event before the call, as it does between an agent's calls
// (its tool call and result are appended), so the index's generation moved
// and the ranking is computed anew; that is what a model's every call
// costs. Warm: the same call repeated on that generation, whose pages are
// cut from the ranking the index kept; no agent repeats a call unchanged,
// but it shows what paging, snippets, titles and rendering cost alone.
type toolQuery struct {
	query
	Fresh latency `json:"fresh"`
	Warm  latency `json:"warm"`
	// SessionsFresh and SessionsWarm are SearchSessions of the same text
	// (its first page, every workspace) in the same two conditions.
	SessionsFresh latency `json:"sessionsFresh"`
	SessionsWarm  latency `json:"sessionsWarm"`
	// ScopedFresh and ScopedWarm are the first page of the request the
	// plugin makes (the same text in the caller's workspace).
	ScopedFresh latency `json:"scopedFresh"`
	ScopedWarm  latency `json:"scopedWarm"`
	OutputBytes int     `json:"outputBytes"`
	// Header is the output's first line ("Session search results (N):").
	Header string `json:"header"`
}

func partTool(ctx context.Context, l layout, runs int, logf func(string, ...any)) (toolResult, error) {
	var res toolResult
	scratch, err := os.MkdirTemp("", "dshbench-tool-*")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(scratch)
	cfg, err := config.Load(config.Options{
		Profile: "session-query", Home: l.home, Cwd: scratch,
		Env:      func(string) (string, bool) { return "", false },
		Set:      []string{"log.level=error", "plugins.spill.root=" + scratch},
		Sections: compositions.ConfigSections(),
	})
	if err != nil {
		return res, err
	}
	start := time.Now()
	rt, err := compositions.New(ctx, compositions.Options{Config: cfg, Kind: compositions.ACP, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return res, err
	}
	defer rt.Close()
	res.Startup = time.Since(start).Seconds()
	// The caller sits in the workspace of the session holding the rare
	// id, so every query kind has hits in its scope.
	page, err := rt.Query.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: queries[0].Text})
	if err != nil {
		return res, err
	}
	if len(page.Items) == 0 {
		return res, errors.New("the rare id is not in the index")
	}
	res.Workspace = page.Items[0].Header.CwdOrEmpty()
	caller := session.NewLive(session.Header{
		Version: session.FormatVersion, ID: "dshbench-caller", CreatedAt: time.Now().UnixMilli(), Cwd: &res.Workspace,
	}, nil, session.LiveOptions{})
	if err := rt.Sessions.Attach(caller); err != nil {
		return res, err
	}
	defer rt.Sessions.Detach(caller)
	ws, err := session.ResolveWorkspace(res.Workspace)
	if err != nil {
		return res, err
	}
	grown := 0
	grow := func() error {
		grown++
		_, err := caller.Append(session.TypeUserMessage, session.Message{Role: session.RoleUser,
			Content: []session.ContentBlock{session.TextBlock("next step")}, Source: session.UserSource, ID: fmt.Sprintf("dshbench-%d", grown)})
		return err
	}
	for _, q := range queries {
		args, err := json.Marshal(map[string]string{"query": q.Text})
		if err != nil {
			return res, err
		}
		tq := toolQuery{query: q}
		n := 0
		plugin := func() error {
			n++
			r := rt.Tools.Run(ctx, &tools.Call{CallID: fmt.Sprintf("call-%d", n), Name: sqtools.ToolSessionSearch, Arguments: string(args), Session: caller, Cwd: res.Workspace})
			text := ""
			for _, c := range r.Content {
				text += c.Text
			}
			if r.IsError {
				return fmt.Errorf("session_search %q: %s", q.Text, text)
			}
			tq.OutputBytes = len(text)
			tq.Header, _, _ = strings.Cut(text, "\n")
			return nil
		}
		service := func() error {
			_, err := rt.Query.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: q.Text})
			return err
		}
		scoped := func() error {
			_, err := rt.Query.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: q.Text, SessionFilters: []sessionquery.SessionFilter{sessionquery.WorkspaceFilter(ws)}})
			return err
		}
		// The four are interleaved, each warm run right after the fresh
		// one it repeats, so they share the machine's load.
		var fresh, warm, sFresh, sWarm, wFresh, wWarm []time.Duration
		for i := range min(runs, 11) + 1 {
			for _, m := range []struct {
				fn          func() error
				fresh, warm *[]time.Duration
			}{{service, &sFresh, &sWarm}, {scoped, &wFresh, &wWarm}, {plugin, &fresh, &warm}} {
				if err := grow(); err != nil {
					return res, err
				}
				for _, into := range []*[]time.Duration{m.fresh, m.warm} {
					start := time.Now()
					if err := m.fn(); err != nil {
						return res, err
					}
					if i > 0 { // the first round warms up
						*into = append(*into, time.Since(start))
					}
				}
			}
		}
		tq.Fresh, tq.Warm = percentiles(fresh), percentiles(warm)
		tq.SessionsFresh, tq.SessionsWarm = percentiles(sFresh), percentiles(sWarm)
		tq.ScopedFresh, tq.ScopedWarm = percentiles(wFresh), percentiles(wWarm)
		logf("%s: session_search fresh %s = %s SearchSessions fresh %s (%s the same request in the workspace, %s); warm %s = %s SearchSessions warm %s; %d bytes, %s",
			q.Name, pp(tq.Fresh), times(tq.Fresh.P50, tq.SessionsFresh.P50, 1), pp(tq.SessionsFresh), times(tq.Fresh.P50, tq.ScopedFresh.P50, 1), pp(tq.ScopedFresh),
			pp(tq.Warm), times(tq.Warm.P50, tq.SessionsWarm.P50, 1), pp(tq.SessionsWarm), tq.OutputBytes, tq.Header)
		res.Queries = append(res.Queries, tq)
	}
	worst, name := worstTool(res.Queries)
	logf("%s: worst %.1f× (%s): %s", toolTarget, worst, name, verdict(worst <= targetToolRatio))
	return res, nil
}

// toolTarget names issue 15's target for session_search.
const toolTarget = "session_search ≤ 3× SearchSessions, same query, fresh ranking (issue 15)"

// freshRatio is the target's measure: session_search over SearchSessions
// of the same text, p50 over p50, both ranking anew.
func (q toolQuery) freshRatio() (float64, bool) { return ratio(q.Fresh.P50, q.SessionsFresh.P50) }

// worstTool returns the largest fresh ratio and the query it was measured on.
func worstTool(qs []toolQuery) (float64, string) {
	worst, name := 0.0, ""
	for _, q := range qs {
		if f, ok := q.freshRatio(); ok && f > worst {
			worst, name = f, q.Name
		}
	}
	return worst, name
}
