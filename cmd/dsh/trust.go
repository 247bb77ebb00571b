package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

func newTrustCmd(g *globals) *cobra.Command {
	var list, revoke bool
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a folder's .dsh/config.yaml, or list and revoke trusted folders",
		Long: `A folder's .dsh/config.yaml comes with the repository, so dsh applies only
its harmless keys (the model, timeouts, display settings, and a stricter
permissions.mode) until you trust the folder. Trusting it applies every key,
including those that can run code, turn approvals off, choose where the model
and your API key are sent, or move dsh's files: trust only folders whose
config you have read.

Trust is of one folder (DIR, default the current directory), not of its
subfolders. It is stored in $DSH_HOME/` + config.TrustFileName + `, which no
project file can move.`,
		Example: `  dsh trust            # trust the current directory
  dsh trust ~/src/app
  dsh trust --list
  dsh trust --revoke ~/src/app`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list && (revoke || len(args) > 0) {
				return usageError{err: errors.New("--list takes no folder and cannot be combined with --revoke"), cmdPath: cmd.CommandPath()}
			}
			store, err := config.TrustFor(g.configOptions())
			if err != nil {
				return err
			}
			if list {
				return listTrusted(g, store)
			}
			dir, err := g.trustDir(args)
			if err != nil {
				return err
			}
			if revoke {
				removed, err := store.Remove(dir)
				if err != nil {
					return err
				}
				if !removed {
					fmt.Fprintf(g.stdout, "%s was not trusted\n", dir)
					return nil
				}
				fmt.Fprintf(g.stdout, "%s is no longer trusted: dsh applies only the harmless keys of its .dsh/config.yaml\n", dir)
				return nil
			}
			canon, err := store.Add(dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "trusted %s: dsh applies every key of %s (undo with dsh trust --revoke)\n",
				canon, filepath.Join(canon, ".dsh", "config.yaml"))
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the trusted folders")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "stop trusting DIR")
	return cmd
}

func (g *globals) trustDir(args []string) (string, error) {
	if len(args) == 1 {
		if filepath.IsAbs(args[0]) || g.cwd == "" {
			return filepath.Abs(args[0])
		}
		return filepath.Join(g.cwd, args[0]), nil
	}
	return g.workdir()
}

func listTrusted(g *globals, store config.TrustStore) error {
	folders, err := store.Folders()
	if err != nil {
		return err
	}
	if len(folders) == 0 {
		fmt.Fprintf(g.stdout, "no trusted folders (%s)\n", store.Path())
		return nil
	}
	for _, f := range folders {
		fmt.Fprintln(g.stdout, f)
	}
	return nil
}
