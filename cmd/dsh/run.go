package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

// errTurnNotCompleted makes `dsh run` exit non-zero after it has already
// reported why the turn did not complete.
var errTurnNotCompleted = errors.New("the task did not complete")

// maxStdinTask bounds a task read from stdin.
const maxStdinTask = 4 << 20

func newRunCmd(g *globals) *cobra.Command {
	var raw, allowBroad, asJSON bool
	format := formatText
	cmd := &cobra.Command{
		Use:   "run [TASK | -]",
		Short: "Run one task headless and print the final answer",
		Long: `Run one task in a fresh session in the current directory and print the
agent's final answer on stdout. The task is the arguments; "-", or no
arguments with stdin not a terminal, reads it from stdin instead (at most
4 MiB), e.g. echo "fix the failing test" | dsh run.

Nothing asks for approval: tools that would ask are denied unless
permissions.mode allows them (e.g. --set permissions.mode=bypass), and each
denied call is reported on stderr. Stderr also names the session
("dsh: session ID", for dsh sessions show or dsh tui --resume) and every
retry of a failed model request. A workspace of /, your home directory or a
folder containing the dsh home is refused unless --allow-broad-workspace is
given.

Exit codes: 0 when the turn completed and no tool call was denied; 1 when it
did not complete (a model error, a missing API key, a cancel) or a call was
denied; 2 for a usage error.

--output-format json (or --json) prints one result object instead of the
answer: {type: "result", sessionId, completed, result, end, deniedToolCalls,
retries, startedAt, endedAt}. stream-json prints every session event as it
is logged (one JSON object per line, the log's own format, streamed deltas
included), then that result object.

On a terminal the answer is printed with control characters and escape
sequences made visible (\x1b), so a reply cannot recolour the terminal, plant
links or write the clipboard; --raw prints it byte for byte. Piped or
redirected output is always the raw answer.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			usage := func(err error) error { return usageError{err: err, cmdPath: cmd.CommandPath()} }
			if asJSON {
				if cmd.Flags().Changed("output-format") && format != formatJSON {
					return usage(fmt.Errorf("--json and --output-format %s exclude each other", format))
				}
				format = formatJSON
			}
			if !validFormat(format) {
				return usage(fmt.Errorf("--output-format %q is not one of %s", format, formatList()))
			}
			task, err := g.runTask(args)
			if err != nil {
				return usage(err)
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
				Env:    g.env,
				Config: cfg, Kind: compositions.Headless, LogWriter: g.stderr, QuietLog: true, Version: version(),
				SandboxLauncher:     sandboxLauncher(),
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
			obs := newRunObserver(g.stdout, g.stderr, format)
			startedAt := time.Now()
			res, runErr := compositions.RunTaskWith(cmd.Context(), rt, cwd, task, compositions.TaskOptions{
				Started: obs.started, Observe: obs.observe,
			})
			err = errors.Join(runErr, rt.Close())
			denied := obs.deniedCalls()
			if format == formatText {
				if res.Text != "" {
					fmt.Fprintln(g.stdout, g.answerText(res.Text, raw))
				}
			} else if res.SessionID != "" {
				report := runReport{Type: "result", SessionID: res.SessionID, Completed: res.Completed() && len(denied) == 0,
					Result: res.Text, End: res.End, Denied: denied, Retries: obs.retryCount(),
					StartedAt: rfc3339(startedAt), EndedAt: rfc3339(time.Now())}
				err = errors.Join(err, obs.writeErr(), writeJSONLine(g.stdout, report, format == formatJSON))
			}
			if err != nil {
				return err
			}
			if !res.Completed() {
				fmt.Fprintf(g.stderr, "dsh: turn ended %s%s (session %s)\n", res.End.Kind, endDetail(res), termtext.Line(res.SessionID))
				return errTurnNotCompleted
			}
			if len(denied) > 0 {
				return fmt.Errorf("%s denied; allow them with --set permissions.mode=accept-edits (edits) or bypass (everything), or see dsh sessions show %s",
					plural(len(denied), "tool call was", "tool calls were"), termtext.Line(res.SessionID))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "print the answer byte for byte even on a terminal (escape sequences included)")
	cmd.Flags().StringVar(&format, "output-format", formatText, "what stdout gets: "+formatList())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON result object (--output-format json)")
	addAllowBroadFlag(cmd, &allowBroad)
	return cmd
}

// runTask is the task of dsh run: its arguments, or stdin for "-" or when
// there are none and stdin is not a terminal.
func (g *globals) runTask(args []string) (string, error) {
	fromStdin := len(args) == 1 && args[0] == "-" || len(args) == 0 && !isTerminal(g.stdin)
	if len(args) == 0 && !fromStdin {
		return "", errors.New("give the task as arguments, e.g. dsh run \"fix the failing test\", or on stdin: echo \"task\" | dsh run -")
	}
	task := strings.Join(args, " ")
	if fromStdin {
		b, err := io.ReadAll(io.LimitReader(g.stdin, maxStdinTask+1))
		if err != nil {
			return "", fmt.Errorf("read the task from stdin: %w", err)
		}
		if len(b) > maxStdinTask {
			return "", fmt.Errorf("the task on stdin is larger than %d MiB; put it in a file and ask dsh to read it", maxStdinTask>>20)
		}
		task = string(b)
	}
	if strings.TrimSpace(task) == "" {
		if fromStdin {
			return "", errors.New("the task on stdin is empty: pipe it in, e.g. echo \"fix the failing test\" | dsh run -")
		}
		return "", errors.New("the task is empty: pass it as an argument, e.g. dsh run \"fix the failing test\"")
	}
	return task, nil
}

// writeJSONLine writes v as JSON: indented for a reader, or on one line in
// a stream.
func writeJSONLine(w io.Writer, v any, indent bool) error {
	if indent {
		return writeJSON(w, v)
	}
	b, err := session.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// plural picks the singular or plural phrase for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
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
