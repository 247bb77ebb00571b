package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

// listedSession is one row of dsh sessions list.
type listedSession struct {
	ID            string  `json:"id"`
	Title         *string `json:"title"`
	CreatedAt     string  `json:"createdAt"`
	Events        *int    `json:"events"`
	Cwd           *string `json:"cwd"`
	ParentSession *string `json:"parentSession,omitempty"`
	Error         string  `json:"error,omitempty"`
	created       int64
}

func newSessionsListCmd(g *globals) *cobra.Command {
	var all, asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List this workspace's sessions, newest first",
		Long: `List the sessions started in the current directory, newest first, with
their title, creation time and number of events. --all-workspaces lists every
session and shows its workspace. Each listed log is read to count its events
and find its title, so --limit (default 50, 0 for all) bounds the work.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usageError{err: errors.New("--limit must be 0 (no limit) or more"), cmdPath: cmd.CommandPath()}
			}
			env, err := g.openQuery()
			if err != nil {
				return err
			}
			defer env.Close()
			ctx := cmd.Context()
			var filters []sessionquery.SessionFilter
			if !all {
				filters = append(filters, sessionquery.SessionFilter{Kind: sessionquery.KindCwd, NullableValues: []*string{&env.cwd}})
			}
			recs, err := env.Query.FilterSessions(ctx, filters)
			if err != nil {
				return err
			}
			more := 0
			if limit > 0 && len(recs) > limit {
				more = len(recs) - limit
				recs = recs[:limit]
			}
			rows := make([]listedSession, 0, len(recs))
			for _, r := range recs {
				row := listedSession{ID: r.Header.ID, CreatedAt: isoTime(r.Header.CreatedAt), Cwd: r.Header.Cwd,
					ParentSession: r.Header.ParentSession, created: r.Header.CreatedAt}
				snap, err := env.Query.ReadSession(ctx, r.Header.ID)
				if err != nil {
					row.Error = err.Error()
				} else {
					n := len(snap.Events)
					row.Events = &n
					if t, err := session.FoldTitle(snap.Events); err == nil && t != nil {
						row.Title = &t.Title
					}
				}
				rows = append(rows, row)
			}
			if asJSON {
				return writeJSON(g.stdout, rows)
			}
			if len(rows) == 0 {
				if all {
					fmt.Fprintln(g.stdout, "No sessions yet.")
				} else {
					fmt.Fprintf(g.stdout, "No sessions in %s. dsh sessions list --all-workspaces shows every workspace.\n", env.cwd)
				}
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
			header := "ID\tCREATED\tEVENTS\tTITLE"
			if all {
				header += "\tWORKSPACE"
			}
			fmt.Fprintln(tw, header)
			for _, r := range rows {
				title, events := "untitled", "?"
				if r.Title != nil {
					title = oneLine(*r.Title, 60)
				}
				if r.Events != nil {
					events = fmt.Sprint(*r.Events)
				}
				if r.Error != "" {
					title = "unreadable: " + oneLine(r.Error, 80)
				}
				line := fmt.Sprintf("%s\t%s\t%s\t%s", termtext.Line(r.ID), formatTime(r.created), events, title)
				if all {
					ws := "(none)"
					if r.Cwd != nil {
						ws = termtext.Line(*r.Cwd)
					}
					line += "\t" + ws
				}
				fmt.Fprintln(tw, line)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if more > 0 {
				fmt.Fprintf(g.stdout, "… and %d older sessions (--limit 0 lists them all)\n", more)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all-workspaces", false, "list the sessions of every workspace")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: [{id, title, createdAt, events, cwd, parentSession}]")
	cmd.Flags().IntVar(&limit, "limit", 50, "list at most this many sessions (0: all)")
	return cmd
}
