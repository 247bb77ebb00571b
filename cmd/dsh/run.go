package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
)

// errTurnNotCompleted makes `dsh run` exit non-zero after it has already
// reported why the turn did not complete.
var errTurnNotCompleted = errors.New("the task did not complete")

func newRunCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "run TASK",
		Short: "Run one task headless and print the final answer",
		Long: `Run one task in a fresh session in the current directory and print the
agent's final answer on stdout. The exit code is 0 only when the turn
completed. Nothing asks for approval: tools that would ask are denied unless
permissions.mode is bypass (e.g. --set permissions.mode=bypass).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			cwd, err := g.workdir()
			if err != nil {
				return err
			}
			rt, err := compositions.New(cmd.Context(), compositions.Options{
				Config: cfg, Kind: compositions.Headless, LogWriter: g.stderr, Version: version(),
			})
			if err != nil {
				return err
			}
			res, runErr := compositions.RunTask(cmd.Context(), rt, cwd, strings.Join(args, " "))
			err = errors.Join(runErr, rt.Close())
			if res.Text != "" {
				fmt.Fprintln(g.stdout, res.Text)
			}
			if err != nil {
				return err
			}
			if !res.Completed() {
				fmt.Fprintf(g.stderr, "dsh: turn ended %s%s (session %s)\n", res.End.Kind, endDetail(res), res.SessionID)
				return errTurnNotCompleted
			}
			return nil
		},
	}
}

func endDetail(res compositions.RunResult) string {
	if e := res.End.Error; e != nil {
		return fmt.Sprintf(": %s (%s)", e.Message, e.Code)
	}
	return ""
}

// workdir is the directory a session runs in.
func (g *globals) workdir() (string, error) {
	if g.cwd != "" {
		return g.cwd, nil
	}
	return os.Getwd()
}

// version is the binary's module version, for user agents and agentInfo.
func version() string {
	info, ok := debug.ReadBuildInfo()
	return readBuild(info, ok).Version
}
