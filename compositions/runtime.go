package compositions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	sqtools "github.com/seed-e9b4dba4/dsh/plugins/sessionquery"
	"github.com/seed-e9b4dba4/dsh/plugins/spill"
	"github.com/seed-e9b4dba4/dsh/plugins/timeout"
)

// AllowBroadWorkspaceFlag is the command-line flag that sets
// Options.AllowBroadWorkspace, named in refusals.
const AllowBroadWorkspaceFlag = "--allow-broad-workspace"

// Kind names a composition.
type Kind string

// The compositions dsh ships.
const (
	ACP      Kind = "acp"
	TUI      Kind = "tui"
	Headless Kind = "headless"
)

// mountsQuery reports whether the composition mounts the session-query
// service: the interactive ones always (for /resume, /search and the
// editor's history); the headless one only for the model-facing plugin, so a
// plain dsh run opens no index.
func (k Kind) mountsQuery(sw switches) bool {
	return k == ACP || k == TUI || sw.sessionQuery
}

// Options configures New.
type Options struct {
	Config *config.Config
	Kind   Kind
	// Log receives diagnostics; nil builds one from the log config, writing
	// to log.file, else LogFile, else LogWriter (stderr by the caller's
	// choice).
	Log       *slog.Logger
	LogWriter io.Writer
	LogFile   string
	// QuietLog raises log.level's default, info, to warn when the records
	// go to LogWriter: dsh run reports progress on stderr in its own words,
	// which info records would repeat.
	QuietLog bool
	// Version is reported to providers and front ends.
	Version string
	// AllowBroadWorkspace admits sessions whose workspace is the file
	// system root, the user's home or a folder holding dsh's data, which
	// are refused otherwise (the user confirmed it, or passed
	// --allow-broad-workspace).
	AllowBroadWorkspace bool
	// Env looks up the environment variables the runtime reads (the API
	// key's); nil reads the process environment. Tests pass their own.
	Env func(string) (string, bool)
	// SandboxLauncher is dsh's own executable, re-executed as the launcher
	// of sandboxed commands (sandbox.MaybeLaunch); empty means commands
	// cannot be sandboxed, so permission mode auto asks for them.
	SandboxLauncher string
	// OnQuery, when set, hears of the session-query service as soon as it
	// is mounted with its index, before the plugins start, so a front end
	// can list sessions while the rest is built. It returns what withdraws
	// that use (and waits for it to end), which runs before the service
	// closes: on a failed build, or on Close.
	OnQuery QueryHook
}

// QueryHook hears of a runtime's session-query service once it is mounted
// with its index (Options.OnQuery); it returns what withdraws its use.
type QueryHook func(*sessionquery.Service) (withdraw func())

// Runtime is one composed host: its services, its plugins and the live
// sessions it drives. All methods are safe for concurrent use.
type Runtime struct {
	Host        *host.Host
	Config      *config.Config
	Kind        Kind
	Log         *slog.Logger
	Store       *store.Store
	Sessions    *session.Registry
	Tools       *tools.Registry
	Prompt      *prompt.Registry
	Provider    llm.Provider
	Permissions *permissions.Service
	// Query is the session-query service; nil in the headless composition
	// unless the session-query plugin is enabled.
	Query *sessionquery.Service
	// Index is Query's search index and catalog; nil when Query is nil or
	// session_query.open_at is "never".
	Index *searchindex.Index

	clock      *clock
	switches   switches
	settings   settings
	closeLog   func() error
	allowBroad bool
	launcher   string
	version    string
	onQuery    QueryHook
	mcp        mcpHub

	mu      sync.Mutex
	agents  map[string]*agent.Agent
	writers map[string]*store.Writer
	closed  bool
}

// New builds the composition described by opts: base services first, then
// the plugins it mounts, activated in dependency order.
func New(ctx context.Context, opts Options) (*Runtime, error) {
	cfg := opts.Config
	if cfg == nil {
		return nil, errors.New("compositions: a loaded config is required")
	}
	set, err := settingsOf(cfg)
	if err != nil {
		return nil, err
	}
	log, closeLog, err := buildLogger(set.log, opts)
	if err != nil {
		return nil, err
	}
	clk := newClock(set.runtime)
	sw, err := switchesOf(cfg)
	if err != nil {
		return nil, errors.Join(err, closeLog())
	}
	r := &Runtime{
		Host:       host.New(log),
		Config:     cfg,
		Kind:       opts.Kind,
		Log:        log,
		Sessions:   session.NewRegistry(),
		Tools:      tools.NewRegistry(log),
		Prompt:     prompt.NewRegistry(),
		clock:      clk,
		switches:   sw,
		settings:   set,
		closeLog:   closeLog,
		version:    opts.Version,
		allowBroad: opts.AllowBroadWorkspace,
		launcher:   opts.SandboxLauncher,
		onQuery:    opts.OnQuery,
		agents:     map[string]*agent.Agent{},
		writers:    map[string]*store.Writer{},
	}
	r.Store = store.New(set.sessions.Dir, store.Options{Now: clk.Now, Log: log})
	if r.Provider, err = newProvider(ctx, set.llm, opts.Version, opts.Env); err != nil {
		return nil, errors.Join(err, closeLog())
	}
	if err := r.mount(ctx); err != nil {
		return nil, errors.Join(err, r.Host.Close(), closeLog())
	}
	return r, nil
}

// mount provides the base services and starts the plugins.
func (r *Runtime) mount(ctx context.Context) error {
	provides := []func() error{
		provide(r.Host, session.RegistryKey, r.Sessions),
		provide(r.Host, tools.ServiceKey, r.Tools),
		provide(r.Host, prompt.ServiceKey, r.Prompt),
		provide(r.Host, llm.ServiceKey, r.Provider),
	}
	for _, p := range provides {
		if err := p(); err != nil {
			return err
		}
	}
	if err := addBaseSections(r.Prompt, r.settings.agent.Persona); err != nil {
		return err
	}
	if r.Kind.mountsQuery(r.switches) {
		if err := r.mountQuery(ctx); err != nil {
			return err
		}
	}
	if err := r.Host.Start(r.plugins(), r.Config); err != nil {
		return err
	}
	perms, ok := host.Get(r.Host, permissions.ServiceKey)
	if !ok {
		return errors.New("compositions: the permissions plugin did not provide its service")
	}
	r.Permissions = perms
	stopRecording := r.recordModes()
	r.Host.OnClose("session settings", func() error { stopRecording(); return nil })
	// dsh's own data always asks, even in a workspace that contains it: the
	// session logs and index hold every past conversation, and the home's
	// config and trust file decide what later starts may do. The service
	// lives as long as the runtime, so the protection is never removed.
	_ = perms.Protect(DataPaths(r.Config)...)
	return nil
}

// DataPaths are dsh's own data under cfg: its home, the session logs and
// the search index. The permission policy always asks before touching
// them, and sandboxed commands cannot read them.
func DataPaths(cfg *config.Config) []string {
	paths := []string{cfg.Home}
	if sessions, err := store.Dir(cfg); err == nil {
		paths = append(paths, sessions)
	}
	if index, _ := cfg.Value("session_query.path").(string); filepath.IsAbs(index) {
		paths = append(paths, index, index+"-wal", index+"-shm", index+"-journal")
	}
	return paths
}

func provide[T any](h *host.Host, k host.Key[T], v T) func() error {
	return func() error {
		_, err := host.Provide(h, k, "", v)
		return err
	}
}

// plugins lists what this composition mounts, in a stable order; the host
// reorders by dependency.
func (r *Runtime) plugins() []host.Plugin {
	// Commands never see the variable the model key is read from.
	ps := []host.Plugin{
		permissions.Plugin(),
		codingtools.PluginWith(codingtools.PluginOptions{HiddenEnv: []string{r.settings.llm.APIKeyEnv}}),
		sandbox.Plugin(sandbox.Options{Launcher: r.launcher, UserHome: r.Config.UserHome()}),
	}
	if r.Kind.mountsQuery(r.switches) && r.switches.sessionQuery {
		ps = append(ps, sqtools.Plugin())
	}
	if r.switches.timeout {
		ps = append(ps, timeout.Plugin())
	}
	if r.switches.spill {
		ps = append(ps, spill.PluginWith(spill.Options{Random: r.clock.Random()}))
	}
	return ps
}

// Now returns the composition's clock reading (fixed in snapshot runs).
func (r *Runtime) Now() time.Time { return r.clock.Now() }

// NewID returns a fresh id (sequential in snapshot runs).
func (r *Runtime) NewID() string { return r.clock.NewID() }

// Close closes every session the runtime drives, then disposes the plugins
// and services. It is idempotent.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	agents := make([]*agent.Agent, 0, len(r.agents))
	for _, a := range r.agents {
		agents = append(agents, a)
	}
	r.mu.Unlock()
	var errs []error
	for _, a := range agents {
		if err := r.CloseSession(a); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, r.closeAllMCP(), r.Host.Close())
	if r.Query != nil {
		errs = append(errs, r.Query.Close())
	}
	errs = append(errs, r.closeLog())
	return errors.Join(errs...)
}

func (r *Runtime) errClosed() error {
	return fmt.Errorf("dsh is shutting down")
}
