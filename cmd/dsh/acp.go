package main

import (
	"context"
	"io"
	"strings"
	"sync"

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
exits with code 0 when the editor closes stdin, after flushing every session
(code 1 if dsh could not start: its configuration or index failed, which
every session request answered).

A session whose cwd is /, your home directory or a folder containing the
dsh home is refused (everything in a workspace is readable unasked) unless
dsh acp runs with --allow-broad-workspace.

Try it without an API key: dsh acp --profile demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The runtime is built while the editor's initialize is
			// answered, so its warnings and the connection's diagnostics
			// share stderr from two goroutines.
			stderr := &syncWriter{w: g.stderr}
			gs := *g
			gs.stderr = stderr
			return compositions.StartACP(cmd.Context(), g.stdin, g.stdout, compositions.ACPOptions{
				Version:   version(),
				LogWriter: stderr,
				Build: func(ctx context.Context, onQuery compositions.QueryHook) (*compositions.Runtime, error) {
					cfg, err := gs.loadConfig()
					if err != nil {
						return nil, err
					}
					return compositions.New(ctx, compositions.Options{
						Env:    gs.env,
						Config: cfg, Kind: compositions.ACP, LogWriter: stderr, Version: version(),
						SandboxLauncher:     sandboxLauncher(),
						AllowBroadWorkspace: allowBroad,
						OnQuery:             onQuery,
					})
				},
			})
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

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
