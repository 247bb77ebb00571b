package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
)

func newIndexStatusCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the index: sessions, events, size on disk and how far behind it is",
		Long: `Show where the index lives, how many sessions and events it holds, its size
on disk, and its lag: the sessions whose logs changed (or appeared, or
disappeared) since it last caught up. Any search catches up; so does
dsh index rebuild, which starts from scratch.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withIndex(func(ix *searchindex.Index) error {
				st, err := ix.Status(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.stdout, st)
				}
				fmt.Fprintf(g.stdout, "index     %s\n", st.Path)
				fmt.Fprintf(g.stdout, "sessions  %d\n", st.Sessions)
				fmt.Fprintf(g.stdout, "events    %d\n", st.Events)
				fmt.Fprintf(g.stdout, "size      %s\n", humanBytes(st.SizeBytes))
				switch st.LagSessions {
				case 0:
					fmt.Fprintln(g.stdout, "lag       none: the index is up to date")
				case 1:
					fmt.Fprintln(g.stdout, "lag       1 session changed since the index last caught up (the next search catches up)")
				default:
					fmt.Fprintf(g.stdout, "lag       %d sessions changed since the index last caught up (the next search catches up)\n", st.LagSessions)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {path, sessions, events, sizeBytes, lagSessions}")
	return cmd
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
