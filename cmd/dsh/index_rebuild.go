package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
)

// rebuildMemoryLimit is the soft limit of Go's memory while a rebuild
// runs (unless GOMEMLIMIT sets one). A build of many small logs keeps
// ~70 MB live (the listing of every log, the logs read ahead, their term
// summaries) beside ~85 MB of SQLite's caches and FTS5's in-memory index,
// and the default GC policy lets the heap reach twice its live size: the
// tiny preset's rebuild peaked at 308 MB RSS, 236 MB with this limit, for
// about 7% more time collecting. Above the limit the GC's share of CPU is
// capped, so a build that needs more still finishes.
const rebuildMemoryLimit = 128 << 20

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
			if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(rebuildMemoryLimit))
			}
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
