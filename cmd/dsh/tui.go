package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
)

// tuiStart says which session the UI opens first, and how.
type tuiStart struct {
	resume     string // an id or unique id prefix to continue
	pick       bool   // open the /resume picker over a new session
	cont       bool   // continue this workspace's last session
	allowBroad bool   // use a broad workspace without asking
}

// pickSession is --resume's value when it is given without an id.
const pickSession = "\x00pick"

func newTUICmd(g *globals) *cobra.Command {
	var start tuiStart
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Chat with dsh in the terminal (the default when dsh runs in a terminal)",
		Long: `Run the terminal UI in the current directory: a streaming transcript with
tool cards, approval dialogs, and commands such as /resume and /search over
your past sessions (/help lists them all). Enter sends, Esc cancels a turn,
Ctrl+C twice exits and prints the command that resumes the session.

--resume ID continues a session (any unique prefix of its id will do; an
ambiguous one lists the candidates and exits 2); --resume alone opens the
picker of this workspace's sessions; -c (--continue, also dsh -c) continues
the session of this directory that changed last.

Stdin and stdout must be terminals; for scripts use dsh run, for editors
dsh acp. While the UI runs, diagnostics go to log.file, by default
$DSH_HOME/logs/tui.log.

Before the UI starts, dsh asks on the terminal whether to trust a folder
whose .dsh/config.yaml sets keys only trusted folders may set, and whether
to use a broad workspace (/, your home directory or a folder containing the
dsh home; --allow-broad-workspace skips that question).

Try it without an API key: dsh tui --profile demo`,
		// --resume takes an optional value, so pflag leaves the id of
		// "--resume ID" as an argument.
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 || len(args) == 1 && start.resume != pickSession {
				return usageError{err: fmt.Errorf("unexpected argument %q; dsh tui takes no arguments besides --resume ID", args[0]), cmdPath: c.CommandPath()}
			}
			return nil
		},
		// --resume ID arrives as an argument (the flag's value is optional).
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 || start.resume != pickSession {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return g.completeSessionIDs(c.Context(), toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if start.resume == pickSession {
				start.resume, start.pick = "", true
				if len(args) == 1 {
					start.resume, start.pick = args[0], false
				}
			}
			if start.cont && (start.resume != "" || start.pick) {
				return usageError{err: errors.New("--continue and --resume exclude each other"), cmdPath: cmd.CommandPath()}
			}
			return runTUI(cmd.Context(), g, start)
		},
	}
	cmd.Flags().StringVar(&start.resume, "resume", "", "continue the session with this id or unique id prefix; alone, pick one from a list")
	cmd.Flags().Lookup("resume").NoOptDefVal = pickSession
	_ = cmd.RegisterFlagCompletionFunc("resume", func(c *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return g.completeSessionIDs(c.Context(), toComplete)
	})
	cmd.Flags().BoolVarP(&start.cont, "continue", "c", false, "continue the last session of this directory")
	addAllowBroadFlag(cmd, &start.allowBroad)
	return cmd
}

// errNoTerminal refuses to start the UI without a terminal.
var errNoTerminal = errors.New("the terminal UI needs a terminal (stdin and stdout must both be terminals); " +
	"for scripts run a task headless with dsh run \"task\", for editors use dsh acp, and dsh --help lists every command")

// runTUI runs the terminal UI and, once the terminal is restored, prints
// the command that resumes the session.
func runTUI(ctx context.Context, g *globals, start tuiStart) error {
	if !g.terminal() {
		return exitCodeError{code: exitUsage, err: errNoTerminal}
	}
	cfg, err := g.loadTUIConfig()
	if err != nil {
		return err
	}
	cwd, err := g.workdir()
	if err != nil {
		return err
	}
	allowBroad := start.allowBroad
	if !allowBroad {
		if allowBroad, err = askBroadWorkspace(g.stdin, g.stdout, compositions.CheckWorkspace(cfg, cwd)); err != nil {
			return err
		}
	}
	rt, err := compositions.New(ctx, compositions.Options{
		Env:    g.env,
		Config: cfg, Kind: compositions.TUI, LogWriter: g.stderr, Version: version(),
		// The terminal belongs to the UI: stderr output would tear it.
		LogFile:             filepath.Join(cfg.Home, "logs", "tui.log"),
		SandboxLauncher:     sandboxLauncher(),
		AllowBroadWorkspace: allowBroad,
	})
	if err != nil {
		return err
	}
	resume, err := startSession(ctx, rt, cwd, start)
	if err != nil {
		return errors.Join(err, rt.Close())
	}
	warning := ""
	if err := rt.CheckCredential(); err != nil {
		warning, _ = credentialProblem(cfg, err)
		if warning == "" {
			warning = err.Error()
		}
	}
	res, runErr := compositions.RunTUI(ctx, rt, compositions.TUIOptions{
		Cwd:           cwd,
		Warning:       warning,
		Resume:        resume,
		PickSession:   start.pick,
		ResumeCommand: g.resumeCommand,
		Version:       version(),
		// NO_COLOR (or TERM=dumb) beats tui.color.
		NoColor: !colorAllowed(g.env),
	})
	err = errors.Join(runErr, rt.Close())
	if res.ResumeCommand != "" {
		fmt.Fprintf(g.stdout, "Resume this session with: %s\n", res.ResumeCommand)
	}
	return err
}

// startSession resolves the session the UI opens first: "" for a new one.
func startSession(ctx context.Context, rt *compositions.Runtime, cwd string, start tuiStart) (string, error) {
	switch {
	case start.cont:
		s, err := lastSession(ctx, rt.Query, cwd)
		return s.Header.ID, err
	case start.resume != "":
		s, err := resolveSession(ctx, rt.Query, start.resume)
		return s.Header.ID, err
	}
	return "", nil
}

// loadTUIConfig loads the configuration and, when the folder's project file
// sets keys an untrusted folder may not, asks on the terminal (before the UI
// owns it) whether to trust the folder.
func (g *globals) loadTUIConfig() (*config.Config, error) {
	cfg, err := config.Load(g.configOptions())
	if err != nil {
		return nil, err
	}
	if p := cfg.Project(); len(p.Ignored) > 0 {
		yes, err := askTrust(g.stdin, g.stdout, p)
		if err != nil {
			return nil, err
		}
		if yes {
			if _, err := cfg.Trust().Add(p.Dir); err != nil {
				return nil, err
			}
			if cfg, err = config.Load(g.configOptions()); err != nil {
				return nil, err
			}
		}
	}
	// The question covered the project's keys; other warnings (a key on
	// the command line) stay on the terminal above the UI.
	for _, w := range cfg.Warnings() {
		if w != cfg.Project().Warning() {
			fmt.Fprintf(g.stderr, "dsh: warning: %s\n", w)
		}
	}
	return cfg, nil
}

// askBroadWorkspace asks, when refusal is a refused workspace, whether to
// use it anyway; declining is an error that ends dsh before the UI starts.
// A nil refusal needs no question.
func askBroadWorkspace(in io.Reader, out io.Writer, refusal error) (bool, error) {
	if refusal == nil {
		return false, nil
	}
	fmt.Fprintf(out, "%v.\nUse it as the workspace anyway? [y/N] ", refusal)
	yes, err := readYes(in)
	if err != nil {
		return false, err
	}
	if !yes {
		return false, errors.New("not started: run dsh in a project folder, or pass " + compositions.AllowBroadWorkspaceFlag)
	}
	return true, nil
}

// askTrust asks whether to trust the project's folder; only "y" or "yes"
// trusts it.
func askTrust(in io.Reader, out io.Writer, p config.Project) (bool, error) {
	fmt.Fprintf(out, "%s sets keys that dsh applies only in folders you trust:\n  %s\n"+
		"They can run code, turn approvals off, send the model (and your API key) elsewhere or move dsh's files.\n"+
		"Trust %s and apply them? (dsh trust --revoke undoes it) [y/N] ",
		p.File, strings.Join(p.Ignored, ", "), p.Dir)
	yes, err := readYes(in)
	if err == nil && !yes {
		fmt.Fprintln(out, "Not trusted: dsh ignores those keys this time.")
	}
	return yes, err
}

// readYes reads one answer line and reports whether it is "y" or "yes". It
// reads one byte at a time so that nothing typed after the answer is taken
// from the UI.
func readYes(in io.Reader) (bool, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < 64 {
		n, err := in.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, fmt.Errorf("reading the answer: %w", err)
		}
	}
	answer := strings.ToLower(strings.TrimSpace(string(line)))
	return answer == "y" || answer == "yes", nil
}

// resumeCommand is the command line that reopens session id with the same
// profile, home and config file as this run.
func (g *globals) resumeCommand(id string) string {
	parts := []string{"dsh", "tui"}
	if g.profile != "" {
		parts = append(parts, "--profile", shellQuote(g.profile))
	}
	if g.home != "" {
		parts = append(parts, "--home", shellQuote(g.home))
	}
	if g.configFile != "" {
		parts = append(parts, "--config", shellQuote(g.configFile))
	}
	return strings.Join(append(parts, "--resume", id), " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// terminal reports whether stdin and stdout are both terminals.
func (g *globals) terminal() bool {
	in, ok := g.stdin.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	out, ok := g.stdout.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	return term.IsTerminal(int(in.Fd())) && term.IsTerminal(int(out.Fd()))
}
