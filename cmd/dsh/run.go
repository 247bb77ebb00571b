package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

// errTurnNotCompleted makes `dsh run` exit non-zero after it has already
// reported why the turn did not complete.
var errTurnNotCompleted = errors.New("the task did not complete")

func newRunCmd(g *globals) *cobra.Command {
	var raw, allowBroad bool
	cmd := &cobra.Command{
		Use:   "run TASK",
		Short: "Run one task headless and print the final answer",
		Long: `Run one task in a fresh session in the current directory and print the
agent's final answer on stdout. The exit code is 0 only when the turn
completed. Nothing asks for approval: tools that would ask are denied unless
permissions.mode is bypass (e.g. --set permissions.mode=bypass). A workspace
of /, your home directory or a folder containing the dsh home is refused
unless --allow-broad-workspace is given.

On a terminal the answer is printed with control characters and escape
sequences made visible (\x1b), so a reply cannot recolour the terminal, plant
links or write the clipboard; --raw prints it byte for byte. Piped or
redirected output is always the raw answer.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			task := strings.Join(args, " ")
			if strings.TrimSpace(task) == "" {
				return usageError{err: errors.New("the task is empty: pass it as an argument, e.g. dsh run \"fix the failing test\""), cmdPath: cmd.CommandPath()}
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			cwd, err := g.workdir()
			if err != nil {
				return err
			}
			if !allowBroad {
				if err := compositions.CheckWorkspace(cfg, cwd); err != nil {
					return fmt.Errorf("%w; to run here anyway pass %s", err, compositions.AllowBroadWorkspaceFlag)
				}
			}
			rt, err := compositions.New(cmd.Context(), compositions.Options{
				Config: cfg, Kind: compositions.Headless, LogWriter: g.stderr, Version: version(),
				AllowBroadWorkspace: allowBroad,
			})
			if err != nil {
				return err
			}
			if err := rt.CheckCredential(); err != nil {
				if msg, ok := credentialProblem(cfg, err); ok {
					err = errors.New(msg)
				}
				return exitCodeError{code: exitError, err: errors.Join(err, rt.Close())}
			}
			res, runErr := compositions.RunTask(cmd.Context(), rt, cwd, task)
			err = errors.Join(runErr, rt.Close())
			if res.Text != "" {
				fmt.Fprintln(g.stdout, g.answerText(res.Text, raw))
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
	cmd.Flags().BoolVar(&raw, "raw", false, "print the answer byte for byte even on a terminal (escape sequences included)")
	addAllowBroadFlag(cmd, &allowBroad)
	return cmd
}

// answerText is the model's answer as dsh run prints it: made safe for a
// terminal unless raw is set or stdout is not a terminal.
func (g *globals) answerText(text string, raw bool) string {
	if raw || !isTerminal(g.stdout) {
		return text
	}
	return termtext.Text(text)
}

func endDetail(res compositions.RunResult) string {
	if e := res.End.Error; e != nil {
		return fmt.Sprintf(": %s (%s)", termtext.Line(e.Message), termtext.Line(e.Code))
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
