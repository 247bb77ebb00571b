package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
)

func newACPCmd(g *globals) *cobra.Command {
	var allowBroad bool
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve an editor over the Agent Client Protocol on stdin/stdout",
		Long: `Run dsh as an ACP agent: the editor (Zed or any ACP client) starts this
command and talks JSON-RPC over stdin and stdout. Stdout carries protocol
frames only; diagnostics go to stderr, or to log.file when set. The process
exits with code 0 when the editor closes stdin, after flushing every session.

A session whose cwd is /, your home directory or a folder containing the
dsh home is refused (everything in a workspace is readable unasked) unless
dsh acp runs with --allow-broad-workspace.

Try it without an API key: dsh acp --profile demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			rt, err := compositions.New(cmd.Context(), compositions.Options{
				Env:    g.env,
				Config: cfg, Kind: compositions.ACP, LogWriter: g.stderr, Version: version(),
				SandboxLauncher:     sandboxLauncher(),
				AllowBroadWorkspace: allowBroad,
			})
			if err != nil {
				return err
			}
			serveErr := compositions.ServeACP(cmd.Context(), rt, g.stdin, g.stdout, version())
			return errors.Join(serveErr, rt.Close())
		},
	}
	addAllowBroadFlag(cmd, &allowBroad)
	return cmd
}

// addAllowBroadFlag adds --allow-broad-workspace to cmd.
func addAllowBroadFlag(cmd *cobra.Command, v *bool) {
	cmd.Flags().BoolVar(v, strings.TrimPrefix(compositions.AllowBroadWorkspaceFlag, "--"), false,
		"allow a workspace of /, your home directory or a folder containing the dsh home (everything in it is readable unasked)")
}
