package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newIndexRebuildCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild",
		Short: "Rebuild the search index from the session logs",
		Long: `Discard everything the index holds and index every session log again, with
a progress bar on a terminal (a line every tenth otherwise). Other dsh
processes sharing the index keep working and see the result. Interrupt it at
any time: what was indexed stays, and the next search finishes the job.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := g.openQuery()
			if err != nil {
				return err
			}
			defer env.Close()
			ix, err := env.index()
			if err != nil {
				return err
			}
			start := time.Now()
			bar := newProgress(g.stderr, "indexing sessions").plainLines()
			err = ix.Rebuild(cmd.Context(), bar.update)
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
		},
	}
}
