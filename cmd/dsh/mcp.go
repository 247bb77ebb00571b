package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

func newMCPCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Inspect the MCP servers of your config",
		Long: `MCP servers give the model more tools (mcp__<server>__<tool>). Add them
under mcp.servers in $DSH_HOME/config.yaml, a profile or a --config file;
an untrusted project's .dsh/config.yaml cannot. In an editor (dsh acp), the
editor's servers are used when it sends any.`,
	}
	requireSubcommand(cmd)
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Start the configured MCP servers and show their status and tool counts",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			cwd, err := g.workdir()
			if err != nil {
				return err
			}
			st, err := compositions.ProbeMCP(c.Context(), cfg, cwd, version())
			if len(st) == 0 && err == nil {
				fmt.Fprintln(g.stdout, "no MCP servers are configured (add them under mcp.servers; see dsh config show for the files dsh reads)")
				return nil
			}
			w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SERVER\tTRANSPORT\tSTATUS\tTOOLS\tDETAIL")
			failed := 0
			for _, s := range st {
				detail := ""
				if s.Problem() {
					failed++
					detail = s.Message()
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", termtext.Text(s.Name), s.Transport, s.State, s.Tools, termtext.Text(detail))
			}
			if ferr := w.Flush(); ferr != nil {
				return ferr
			}
			if err != nil {
				return err
			}
			if failed > 0 {
				return exitCodeError{code: exitError, err: fmt.Errorf("%d of %d MCP servers failed to start", failed, len(st))}
			}
			return nil
		},
	})
	return cmd
}
