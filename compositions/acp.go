package compositions

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/seed-e9b4dba4/dsh/host/acp"
)

// ServeACP runs the ACP front end over r until in ends (or ctx is done):
// the editor's frames arrive on in, ours leave on out, which must carry
// nothing else. Sessions it opened are closed and flushed before it
// returns; r itself stays open for the caller to Close.
func ServeACP(ctx context.Context, r *Runtime, in io.Reader, out io.Writer, version string) error {
	if r.Kind != ACP {
		return errors.New("compositions: ServeACP needs a runtime of kind acp")
	}
	opts := acp.Options{
		Sessions:    r,
		Catalog:     r.Query,
		Tools:       r.Tools,
		Permissions: r.Permissions,
		MCP:         r,
		Models:      r.Provider.Models(),
		Version:     version,
		Log:         r.Log.With("component", "acp"),
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
		opts.Search = r.Query
	}
	return acp.Serve(ctx, in, out, opts)
}
