package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
)

func newIndexRebuildCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild",
		Short: "Rebuild the search index from the session logs",
		Long: `Index every session log again from nothing, with a progress bar on a
terminal (a line every tenth otherwise). The new index is built beside the
old one and swapped in when complete: other dsh processes sharing it keep
searching the old one meanwhile and then see the result. Interrupt it at any
time: the old index stays as it was.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withIndex(func(ix *searchindex.Index) error {
				start := time.Now()
				bar := newProgress(g.stderr, "indexing sessions").plainLines()
				err := ix.Rebuild(cmd.Context(), bar.update)
				bar.done()
				if err != nil {
					return err
				}
				st, err := ix.Status(cmd.Context())
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "Rebuilt %s: %d sessions, %d events, %s, in %s.\n",
					st.Path, st.Sessions, st.Events, humanBytes(st.SizeBytes), time.Since(start).Round(time.Millisecond))
				return nil
			})
		},
	}
}
