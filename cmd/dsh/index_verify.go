package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
)

func newIndexVerifyCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Compare the index with every session log and repair any drift",
		Long: `Read the header of every session log and compare the index with it. Searches
and listings follow the change journal and notice sessions created or deleted
behind dsh's back through their workspace directories; a log edited in place,
or a journal record lost in a machine crash, is caught by a slow background
re-check or by this command. It reports the sessions that were missing,
stale or gone from the index, and repairs them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withIndex(func(ix *searchindex.Index) error {
				bar := newProgress(g.stderr, "repairing the index")
				rep, err := ix.Verify(cmd.Context(), bar.update)
				bar.done()
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.stdout, rep)
				}
				if !rep.Drifted() {
					fmt.Fprintf(g.stdout, "Checked %d session logs: the index is up to date.\n", rep.Sessions)
					return nil
				}
				var parts []string
				for _, p := range []struct {
					ids  []string
					what string
				}{{rep.Added, "missing"}, {rep.Changed, "stale"}, {rep.Removed, "gone from disk"}} {
					if len(p.ids) > 0 {
						parts = append(parts, fmt.Sprintf("%d %s", len(p.ids), p.what))
					}
				}
				fmt.Fprintf(g.stdout, "Checked %d session logs: %s; the index is repaired.\n", rep.Sessions, strings.Join(parts, ", "))
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {sessions, added, changed, removed}")
	return cmd
}
