package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

func newSessionsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, search, show and trace your past sessions",
		Long: `Read the sessions dsh keeps under $DSH_HOME/sessions. Every command is
scoped to the sessions of the current directory (the workspace) unless
--all-workspaces is given; show and trace take a whole id from any workspace
or a unique id prefix (an ambiguous one lists the candidates and exits 2). Search uses the full-text index at
session_query.path (default $DSH_HOME/session-query.db), which dsh keeps up to
date by itself; dsh index status and dsh index rebuild manage it.`,
	}
	requireSubcommand(cmd)
	cmd.AddCommand(newSessionsListCmd(g), newSessionsSearchCmd(g), newSessionsShowCmd(g), newSessionsTraceCmd(g))
	return cmd
}

// queryEnv is the persisted-session catalog (service, store, index) the
// sessions and index commands read from, with the workspace they run in.
type queryEnv struct {
	*compositions.Catalog
	cfg *config.Config
	ws  session.Workspace // the workspace dsh runs in
}

func (g *globals) openQuery() (*queryEnv, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	cwd, err := g.workdir()
	if err != nil {
		return nil, err
	}
	ws, err := session.ResolveWorkspace(cwd)
	if err != nil {
		return nil, err
	}
	cat, err := compositions.OpenCatalog(cfg, func(msg string) { fmt.Fprintln(g.stderr, "dsh: "+msg) })
	if err != nil {
		return nil, err
	}
	return &queryEnv{Catalog: cat, cfg: cfg, ws: ws}, nil
}

// errIndexDisabled explains a search or index command under open_at never.
var errIndexDisabled = errors.New(`session search is disabled: session_query.open_at is "never" in your configuration; ` +
	`set it to "startup" (e.g. --set session_query.open_at=startup) to use the index`)

func (e *queryEnv) index() (*searchindex.Index, error) {
	if e.Index == nil {
		return nil, errIndexDisabled
	}
	return e.Index, nil
}

// inWorkspace reports whether h belongs to the current workspace.
func (e *queryEnv) inWorkspace(h session.Header) bool {
	return e.ws.Holds(h.Cwd)
}

// scope resolves arg (an id or a unique id prefix) to a session this
// command may show: an exact id from any workspace, a prefix only of this
// workspace's sessions unless all is set.
func (e *queryEnv) scope(ctx context.Context, arg string, all bool) (sessionquery.SessionSummary, error) {
	s, err := resolveSession(ctx, e.Query, arg)
	if err != nil {
		return s, err
	}
	if !all && s.Header.ID != arg && !e.inWorkspace(s.Header) {
		return sessionquery.SessionSummary{}, fmt.Errorf("the only session starting with %q is %s of workspace %s, not %s; give its whole id or pass --all-workspaces",
			arg, s.Header.ID, workspaceOf(s.Header), e.ws.Given)
	}
	return s, nil
}

func workspaceOf(h session.Header) string {
	if h.Cwd == nil {
		return "(none)"
	}
	return *h.Cwd
}

// titles reads the titles of ids in one batch; a session whose title
// cannot be read is shown untitled.
func (e *queryEnv) titles(ctx context.Context, ids []string) map[string]string {
	out := map[string]string{}
	if len(ids) == 0 {
		return out
	}
	results, err := e.Query.ReadTitleSnapshots(ctx, ids)
	if err != nil {
		return out
	}
	for _, r := range results {
		if r.Status == sessionquery.Fulfilled && r.Value != nil && r.Value.Title != nil {
			out[r.SessionID] = r.Value.Title.Title
		}
	}
	return out
}

func formatTime(ms int64) string {
	return time.UnixMilli(ms).Local().Format("2006-01-02 15:04")
}

func isoTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// oneLine collapses text to one line safe for a terminal, of at most n
// runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(termtext.Text(s)), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func writeJSON(w io.Writer, v any) error {
	b, err := session.MarshalIndent(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
