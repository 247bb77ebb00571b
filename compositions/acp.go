package compositions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/seed-e9b4dba4/dsh/host/acp"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// ServeACP runs the ACP front end over r until in ends (or ctx is done):
// the editor's frames arrive on in, ours leave on out, which must carry
// nothing else. Sessions it opened are closed and flushed before it
// returns; r itself stays open for the caller to Close.
func ServeACP(ctx context.Context, r *Runtime, in io.Reader, out io.Writer, version string) error {
	if err := r.servesACP(); err != nil {
		return err
	}
	return acp.Serve(ctx, in, out, acp.Options{
		Backend:   acp.Ready(r.acpBackend()),
		RemoteMCP: true,
		Version:   version,
		Log:       r.Log.With("component", "acp"),
	})
}

// ACPOptions configures StartACP.
type ACPOptions struct {
	// Build makes the runtime, of kind ACP (loading the configuration,
	// opening the session-query index, starting the plugins). StartACP
	// calls it once, on a goroutine of its own, while the editor's
	// initialize is answered; every session request waits for it, except
	// session/list once the runtime heard of its session-query service
	// through onQuery, which Build passes as Options.OnQuery. Its context
	// ends when the input does and no request waits for it.
	Build   func(ctx context.Context, onQuery QueryHook) (*Runtime, error)
	Version string
	// LogWriter receives the connection's diagnostics until the runtime's
	// own log (log.file, log.level) takes over once built, and for good if
	// the build fails.
	LogWriter io.Writer
}

// StartACP is ServeACP for a runtime not built yet: the editor gets its
// initialize answer without waiting for the configuration, the index or
// the plugins, session/list is answered as soon as the index is open, and
// a failed build answers every session request with its error (and is
// returned when the input ends). StartACP closes the runtime it built
// before it returns.
func StartACP(ctx context.Context, in io.Reader, out io.Writer, o ACPOptions) error {
	w := o.LogWriter
	if w == nil {
		w = io.Discard
	}
	log := newLateHandler(slog.NewTextHandler(w, nil))
	var rt *Runtime
	build := func(ctx context.Context, early acp.Early) (acp.Backend, error) {
		r, err := o.Build(ctx, func(q *sessionquery.Service) func() { return early.ServeCatalog(q) })
		rt = r
		if err != nil {
			return acp.Backend{}, err
		}
		if r == nil {
			return acp.Backend{}, errors.New("compositions: ACPOptions.Build returned no runtime")
		}
		if err := r.servesACP(); err != nil {
			return acp.Backend{}, err
		}
		log.takeOver(r.Log.Handler())
		return r.acpBackend(), nil
	}
	err := acp.Serve(ctx, in, out, acp.Options{
		Backend:   build,
		RemoteMCP: true,
		Version:   o.Version,
		Log:       slog.New(log).With("component", "acp"),
	})
	// Serve returns only after build did, so rt is settled.
	if rt != nil {
		err = errors.Join(err, rt.Close())
	}
	return err
}

func (r *Runtime) servesACP() error {
	if r.Kind != ACP {
		return errors.New("compositions: ServeACP needs a runtime of kind acp")
	}
	return nil
}

// acpBackend is what the ACP front end's session requests use.
func (r *Runtime) acpBackend() acp.Backend {
	b := acp.Backend{
		Sessions:    r,
		Catalog:     r.Query,
		Tools:       r.Tools,
		Permissions: r.Permissions,
		MCP:         r,
		Models:      r.Provider.Models(),
		NewID:       r.NewID,
		Workspace: func(cwd string) error {
			if err := r.CheckWorkspace(cwd); err != nil {
				return fmt.Errorf("%w (or start dsh acp with %s)", err, AllowBroadWorkspaceFlag)
			}
			return nil
		},
	}
	if r.Index != nil {
		// The editor's /search is the same full-text search as dsh's.
		b.Search = r.Query
	}
	return b
}
