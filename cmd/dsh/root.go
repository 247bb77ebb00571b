package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

// Exit codes of the dsh process.
const (
	exitOK    = 0
	exitError = 1 // the command failed, including invalid configuration
	exitUsage = 2 // the command line itself is wrong
)

// globals is what every command shares: the global flags, the I/O streams and
// the process environment, passed explicitly so commands run in tests without
// a terminal or the real environment.
type globals struct {
	profile    string
	configFile string
	home       string
	set        []string

	stdin          io.Reader
	stdout, stderr io.Writer
	env            func(string) (string, bool)
	environ        func() []string // every NAME=value, for the DSH_* typo check; nil skips it
	cwd            string          // "" means the process working directory
}

// loadConfig loads the layered configuration the global flags select and
// prints its warnings (ignored keys of an untrusted project) on stderr.
func (g *globals) loadConfig() (*config.Config, error) {
	cfg, err := config.Load(g.configOptions())
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(g.stderr, "dsh: warning: %s\n", w)
	}
	if g.environ != nil {
		warnUnknownEnv(g.stderr, cfg, g.environ())
	}
	return cfg, nil
}

func (g *globals) configOptions() config.Options {
	return config.Options{
		Profile:    g.profile,
		ConfigFile: g.configFile,
		Home:       g.home,
		Cwd:        g.cwd,
		Env:        g.env,
		Set:        g.set,
		Sections:   compositions.ConfigSections(),
	}
}

// commands lists every subcommand constructor; each lives in its own file.
func commands() []func(*globals) *cobra.Command {
	return []func(*globals) *cobra.Command{
		newACPCmd,
		newConfigCmd,
		newDoctorCmd,
		newIndexCmd,
		newMCPCmd,
		newRunCmd,
		newSessionsCmd,
		newTrustCmd,
		newTUICmd,
		newVersionCmd,
	}
}

// run is main without the process: it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return execute(ctx, args, &globals{stdin: stdin, stdout: stdout, stderr: stderr, env: os.LookupEnv, environ: os.Environ})
}

func execute(ctx context.Context, args []string, g *globals) int {
	root := newRootCmd(g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(g.stderr, "dsh: %s\n", termtext.Text(err.Error()))
	var ce exitCodeError
	if errors.As(err, &ce) {
		return ce.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(g.stderr, "Run '%s --help' for usage.\n", ue.cmdPath)
		return exitUsage
	}
	return exitError
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "dsh",
		Short: "A coding agent for your editor (ACP) and your terminal",
		Long: `dsh is a coding agent. Run it inside an editor over the Agent Client
Protocol (dsh acp), or in a terminal: run bare, dsh opens its terminal UI
(dsh tui). It keeps every session as an append-only log under $DSH_HOME
(default ~/.dsh).

Configuration is layered, lowest to highest: built-in defaults, the profile,
$DSH_HOME/config.yaml, ./.dsh/config.yaml, --config FILE, DSH_* environment
variables, flags. A folder's .dsh/config.yaml applies only its harmless keys
until you trust the folder (dsh trust). See the effective values with:
dsh config show`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version prints what dsh version prints.
	info, ok := debug.ReadBuildInfo()
	root.Version = readBuild(info, ok).String()
	root.SetVersionTemplate("{{.Version}}")
	requireSubcommand(root)
	// Bare dsh is the terminal UI; it refuses clearly without a terminal.
	var start tuiStart
	root.RunE = func(c *cobra.Command, _ []string) error { return runTUI(c.Context(), g, start) }
	root.Flags().BoolVarP(&start.cont, "continue", "c", false, "continue the last session of this directory in the terminal UI")
	root.SetIn(g.stdin)
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err: err, cmdPath: c.CommandPath()}
	})

	pf := root.PersistentFlags()
	pf.StringVar(&g.profile, "profile", "", "config profile: embedded, or $DSH_HOME/profiles/NAME.yaml (default \"default\")")
	pf.StringVar(&g.configFile, "config", "", "extra config file, above ./.dsh/config.yaml and below DSH_* variables")
	pf.StringVar(&g.home, "home", "", "dsh home directory (overrides DSH_HOME; default ~/.dsh)")
	pf.StringArrayVar(&g.set, "set", nil, "set a config key, e.g. --set llm.model=deepseek-v4-pro (repeatable)")

	_ = root.RegisterFlagCompletionFunc("profile", g.completeProfiles)
	_ = root.RegisterFlagCompletionFunc("set", g.completeSetFlag)

	for _, newCmd := range commands() {
		root.AddCommand(newCmd(g))
	}
	usageArgs(root)
	return root
}

// usageArgs makes every argument-count error of cmd and its subcommands a
// usage error (exit 2) that says what is missing or extra and shows the
// command's usage line, instead of cobra's "accepts 1 arg(s)".
func usageArgs(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			err := check(c, args)
			if err == nil {
				return nil
			}
			var ue usageError
			if errors.As(err, &ue) {
				return err
			}
			return usageError{err: argsError(c, args), cmdPath: c.CommandPath()}
		}
	}
	for _, sub := range cmd.Commands() {
		usageArgs(sub)
	}
}

// argsError words a wrong number of arguments from the command's Use line
// ("show ID", "search QUERY", "trust [DIR]").
func argsError(c *cobra.Command, args []string) error {
	spec := strings.Fields(c.Use)[1:]
	var required []string
	for _, s := range spec {
		if !strings.HasPrefix(s, "[") {
			required = append(required, s)
		}
	}
	usage := c.CommandPath()
	if len(spec) > 0 {
		usage += " " + strings.Join(spec, " ")
	}
	if len(args) < len(required) {
		return fmt.Errorf("%s is missing %s (usage: %s)", c.CommandPath(), strings.Join(required[len(args):], " "), usage)
	}
	if len(spec) == 0 {
		return fmt.Errorf("%s takes no arguments, got %q (usage: %s)", c.CommandPath(), args[0], usage)
	}
	return fmt.Errorf("%s got too many arguments, starting at %q; quote a value that has spaces (usage: %s)", c.CommandPath(), args[min(len(spec), len(args)-1)], usage)
}

// requireSubcommand makes a command that only groups subcommands print its
// help when called bare and reject anything else as a usage error.
func requireSubcommand(cmd *cobra.Command) {
	cmd.SuggestionsMinimumDistance = 2
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %s", strings.Join(s, " or "))
		}
		return usageError{err: errors.New(msg), cmdPath: c.CommandPath()}
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}

// usageError is a mistake on the command line, reported with exit code 2.
type usageError struct {
	err     error
	cmdPath string
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitCodeError is a failure reported with a specific exit code and no
// pointer to --help (the message already says what to do).
type exitCodeError struct {
	code int
	err  error
}

func (e exitCodeError) Error() string { return e.err.Error() }
func (e exitCodeError) Unwrap() error { return e.err }
