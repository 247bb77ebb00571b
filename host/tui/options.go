package tui

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/uuid"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Sessions creates, continues and closes the agents the UI drives. A
// composition's runtime satisfies it.
type Sessions interface {
	// NewSession starts a fresh persisted session in cwd.
	NewSession(ctx context.Context, cwd string) (*agent.Agent, error)
	// ResumeSession continues a persisted session.
	ResumeSession(ctx context.Context, id string) (*agent.Agent, error)
	// ForkSession starts a session seeded with id's log up to boundary
	// (session.ForkLatest for the whole log).
	ForkSession(ctx context.Context, id string, boundary int) (*agent.Agent, error)
	// CloseSession cancels a running turn, flushes the log and releases it.
	CloseSession(a *agent.Agent) error
}

// Query is the part of the session-query service the UI reads: the
// catalog's summaries for /resume, full-text search and titles for
// /search, and whole logs for the read-only viewer.
type Query interface {
	ListSummaries(ctx context.Context, req sessionquery.SummaryRequest) (sessionquery.SummaryPage, error)
	ReadTitleSnapshots(ctx context.Context, ids []string) ([]sessionquery.TitleResult, error)
	SearchSessions(ctx context.Context, req sessionquery.SessionSearchRequest) (sessionquery.SessionSearchPage, error)
	SearchEvents(ctx context.Context, req sessionquery.EventSearchRequest) (sessionquery.EventSearchPage, error)
	ReadSession(ctx context.Context, id string) (sessionquery.LogSnapshot, error)
}

// Permissions reads and switches a session's permission mode.
type Permissions interface {
	Mode(sessionID string) permissions.Mode
	SetMode(sessionID string, m permissions.Mode) error
	OnModeChange(fn func(permissions.ModeChange)) (unsubscribe func())
}

// Models is the advisory model catalog of the configured provider.
type Models interface {
	Name() string
	Models() []llm.ModelInfo
	Model(id string) llm.ModelInfo
}

// SectionPath is the UI's config section.
const SectionPath = "tui"

// Config is the tui section of the configuration, declared to host/config
// by ConfigSchema (configs/default.yaml holds its defaults and docs).
type Config struct {
	// ShowReasoning shows the model's reasoning (Ctrl+R toggles it).
	ShowReasoning bool `mapstructure:"show_reasoning"`
	// MaxToolOutputLines is the collapsed tool card's preview height.
	MaxToolOutputLines int `mapstructure:"max_tool_output_lines"`
	// Color enables colours; without it only attributes are used.
	Color bool `mapstructure:"color"`
	// Mouse enables wheel scrolling and clicking tool cards.
	Mouse bool `mapstructure:"mouse"`
}

// ConfigSchema declares the tui section. Its keys only change how the
// terminal shows a session, so an untrusted project may set every one.
var ConfigSchema = config.Schema{
	Path:  SectionPath,
	Type:  reflect.TypeFor[Config](),
	Rules: map[string]config.Rule{"max_tool_output_lines": config.IntAtLeast(1)},
	Safe:  []string{"show_reasoning", "max_tool_output_lines", "color", "mouse"},
}

// Options configures Run. Sessions, Tools and Cwd are required.
type Options struct {
	Sessions    Sessions
	Query       Query // nil: /resume and /search say the service is not mounted
	Tools       *tools.Registry
	Permissions Permissions // nil: /mode is unavailable
	Models      Models      // nil: /model accepts ids without a catalog
	MCP         MCP         // nil: /mcp says MCP is not available
	Config      Config
	// Cwd is the workspace new sessions start in (absolute).
	Cwd string
	// Resume continues this session instead of starting a new one.
	Resume string
	// PickSession opens the /resume picker as soon as the UI starts.
	PickSession bool
	// PromptHistory is the file that keeps the prompts sent (Up recalls
	// them in a later run, per workspace); "" keeps them for this run only.
	PromptHistory string
	// Version is shown in /help.
	Version string
	// Warning, when set, is shown as an error notice as soon as the UI
	// opens (e.g. that the model provider has no API key).
	Warning string
	// ResumeCommand formats the command that resumes a session, printed by
	// the caller after exit and shown in /help; nil uses "dsh tui --resume ID".
	ResumeCommand func(id string) string

	// Screen is the terminal; nil opens the process terminal. Tests pass a
	// tcell.SimulationScreen.
	Screen tcell.Screen
	// AfterDraw, when set, is called on the UI goroutine after every draw,
	// before the screen is shown; tests use it to wait for content.
	AfterDraw func(screen tcell.Screen)
	Now       func() time.Time
	NewID     func() string
	Log       *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.Sessions == nil {
		return o, errors.New("tui: Options.Sessions is required")
	}
	if o.Tools == nil {
		return o, errors.New("tui: Options.Tools is required")
	}
	if o.Cwd == "" {
		return o, errors.New("tui: Options.Cwd is required")
	}
	if o.Config.MaxToolOutputLines <= 0 {
		o.Config.MaxToolOutputLines = 6
	}
	if o.ResumeCommand == nil {
		o.ResumeCommand = func(id string) string { return "dsh tui --resume " + id }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = uuid.NewString
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// Result is what Run reports once the terminal is restored.
type Result struct {
	// SessionID is the session shown last; "" when none was opened.
	SessionID string
	// ResumeCommand resumes it ("" when there is no session or it has no
	// events yet).
	ResumeCommand string
}
