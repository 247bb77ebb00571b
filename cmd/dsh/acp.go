package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
)

func newACPCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "acp",
		Short: "Serve an editor over the Agent Client Protocol on stdin/stdout",
		Long: `Run dsh as an ACP agent: the editor (Zed or any ACP client) starts this
command and talks JSON-RPC over stdin and stdout. Stdout carries protocol
frames only; diagnostics go to stderr, or to log.file when set. The process
exits with code 0 when the editor closes stdin, after flushing every session.

Try it without an API key: dsh acp --profile demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			rt, err := compositions.New(cmd.Context(), compositions.Options{
				Config: cfg, Kind: compositions.ACP, LogWriter: g.stderr, Version: version(),
			})
			if err != nil {
				return err
			}
			serveErr := compositions.ServeACP(cmd.Context(), rt, g.stdin, g.stdout, version())
			return errors.Join(serveErr, rt.Close())
		},
	}
}
