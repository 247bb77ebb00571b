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
// included).
type toolResult struct {
	// Workspace is the caller's cwd: the one holding the rare id.
	Workspace string      `json:"workspace"`
	Startup   float64     `json:"startupSeconds"`
	Queries   []toolQuery `json:"queries"`
}

type toolQuery struct {
	query
	Latency     latency `json:"latency"`
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
	for _, q := range queries {
		args, err := json.Marshal(map[string]string{"query": q.Text})
		if err != nil {
			return res, err
		}
		tq := toolQuery{query: q}
		n := 0
		tq.Latency, err = measure(1, min(runs, 11), func() error {
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
		})
		if err != nil {
			return res, err
		}
		logf("%s: p50 %s, %d bytes, %s", q.Name, tq.Latency.P50, tq.OutputBytes, tq.Header)
		res.Queries = append(res.Queries, tq)
	}
	return res, nil
}
