package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
session and shows its workspace. Titles and counts come from the search
index's catalog, so no log is read; --limit (default 50, 0 for all) bounds
the rows shown.`,
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
			req := sessionquery.SummaryRequest{Limit: limit}
			if !all {
				req.Cwds = env.ws.Forms()
			}
			page, err := env.Query.ListSummaries(cmd.Context(), req)
			if err != nil {
				return err
			}
			more := page.Total - len(page.Items)
			rows := make([]listedSession, 0, len(page.Items))
			for _, sum := range page.Items {
				h := sum.Header
				row := listedSession{ID: h.ID, CreatedAt: isoTime(h.CreatedAt), Cwd: h.Cwd,
					ParentSession: h.ParentSession, created: h.CreatedAt}
				switch {
				case sum.Unreadable != "":
					row.Error = sum.Unreadable
				case sum.Invalid != "":
					row.Error = sum.Invalid
				default:
					n := sum.Events
					row.Events = &n
					if sum.Title != nil {
						row.Title = &sum.Title.Title
					}
				}
				rows = append(rows, row)
			}
			if asJSON {
				return writeJSON(g.stdout, rows)
			}
			if len(rows) == 0 {
				if all {
					fmt.Fprintln(g.stderr, "No sessions yet.")
				} else {
					fmt.Fprintf(g.stderr, "No sessions in %s. dsh sessions list --all-workspaces shows every workspace.\n", termtext.Line(env.ws.Given))
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
				fmt.Fprintf(g.stderr, "… and %s (--limit 0 lists them all)\n", plural(more, "older session", "older sessions"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all-workspaces", false, "list the sessions of every workspace")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: [{id, title, createdAt, events, cwd, parentSession}]")
	cmd.Flags().IntVar(&limit, "limit", 50, "list at most this many sessions (0: all)")
	return cmd
}
