package acp

import (
	"context"
	"errors"
	"log/slog"

	"github.com/google/uuid"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Sessions creates, reopens and closes the agents that drive ACP sessions.
// The composition's runtime implements it.
type Sessions interface {
	// NewSession creates a persisted session in cwd, an absolute directory.
	NewSession(ctx context.Context, cwd string) (*agent.Agent, error)
	// ResumeSession reopens a persisted session (or returns the agent that
	// already drives it in this process).
	ResumeSession(ctx context.Context, id string) (*agent.Agent, error)
	// ForkSession starts a persisted session seeded with id's log up to
	// boundary (session.ForkLatest for the whole log), for /fork.
	ForkSession(ctx context.Context, id string, boundary int) (*agent.Agent, error)
	// CloseSession cancels a's work, flushes and closes its log.
	CloseSession(a *agent.Agent) error
}

// Search is the session-query search behind /search;
// *sessionquery.Service implements it.
type Search interface {
	SearchSessions(ctx context.Context, req sessionquery.SessionSearchRequest) (sessionquery.SessionSearchPage, error)
}

// Catalog is the part of the session-query service that session/list and
// session/load use; *sessionquery.Service implements it.
type Catalog interface {
	ListSummaries(ctx context.Context, req sessionquery.SummaryRequest) (sessionquery.SummaryPage, error)
	ReadTitleSnapshots(ctx context.Context, ids []string) ([]sessionquery.TitleResult, error)
}

// DefaultPageSize is the number of sessions one session/list page holds.
const DefaultPageSize = 50

// MaxFrameBytes is the longest inbound line, newline excluded, that the
// SDK accepts (its scanner holds 10 MiB including the newline); a longer
// line is answered with an error instead of ending the connection.
const MaxFrameBytes = 10<<20 - 1

// Backend is what the session requests of a connection use. Sessions,
// Catalog, Tools and Permissions are required.
type Backend struct {
	Sessions    Sessions
	Catalog     Catalog
	Tools       *tools.Registry
	Permissions *permissions.Service
	// MCP connects the MCP servers the editor sends; nil ignores them.
	MCP MCP
	// Search, when set, offers /search over past sessions.
	Search Search
	// Models is the model catalog offered as the "model" config option.
	Models []llm.ModelInfo
	// NewID mints prompt message ids; nil uses random UUIDs.
	NewID func() string
	// Workspace, when set, vets the cwd of session/new and session/load
	// (an existing absolute directory by then); its error is the request's
	// invalid-params error. The composition refuses workspaces such as /
	// and $HOME with it.
	Workspace func(cwd string) error
}

// Ready is a Backend that is already built, for Options.Backend.
func Ready(b Backend) func(context.Context, Early) (Backend, error) {
	return func(context.Context, Early) (Backend, error) { return b, nil }
}

// Options configures Serve. Backend is required.
type Options struct {
	// Backend builds what the session requests use. Serve calls it once,
	// on a goroutine of its own, as soon as it starts: initialize is
	// answered without waiting for it, every other request waits for it
	// (and answers its error if it failed), except session/list once the
	// build has served its Catalog through early. Its context ends when
	// the input does and no request waits for it; Serve returns only after
	// Backend has.
	Backend func(ctx context.Context, early Early) (Backend, error)
	// RemoteMCP advertises MCP servers over HTTP and SSE in initialize,
	// which is answered before the Backend exists; the Backend's MCP must
	// then be set.
	RemoteMCP bool
	// Version is reported as agentInfo.version.
	Version string
	// Log receives diagnostics; nil discards them. It must not write to
	// the output, which carries frames only.
	Log *slog.Logger
	// PageSize is the session/list page size; 0 means DefaultPageSize.
	PageSize int
	// MaxFrameBytes bounds inbound lines; 0 means MaxFrameBytes.
	MaxFrameBytes int
}

func (o Options) withDefaults() (Options, error) {
	if o.Backend == nil {
		return o, errors.New("acp: Options.Backend is required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.MaxFrameBytes <= 0 || o.MaxFrameBytes > MaxFrameBytes {
		o.MaxFrameBytes = MaxFrameBytes
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o, nil
}

// check reports what b lacks, and fills in its defaults.
func (b Backend) check(o Options) (Backend, error) {
	var errs []error
	if b.Sessions == nil {
		errs = append(errs, errors.New("acp: Backend.Sessions is required"))
	}
	if b.Catalog == nil {
		errs = append(errs, errors.New("acp: Backend.Catalog is required"))
	}
	if b.Tools == nil {
		errs = append(errs, errors.New("acp: Backend.Tools is required"))
	}
	if b.Permissions == nil {
		errs = append(errs, errors.New("acp: Backend.Permissions is required"))
	}
	if o.RemoteMCP && b.MCP == nil {
		errs = append(errs, errors.New("acp: Options.RemoteMCP needs Backend.MCP"))
	}
	if b.NewID == nil {
		b.NewID = uuid.NewString
	}
	return b, errors.Join(errs...)
}
