package compositions

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/mcp"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// mcpHub owns the MCP managers of a runtime's sessions, one per session.
type mcpHub struct {
	mu       sync.Mutex
	managers map[string]*mcp.Manager
	closed   bool
	statuses hook.Observers[mcp.Status]
}

// ConfiguredMCPServers returns the servers of the mcp.servers config,
// ordered by name.
func ConfiguredMCPServers(c *config.Config) []mcp.Server {
	servers := c.MCPServers()
	out := make([]mcp.Server, 0, len(servers))
	for name, s := range servers {
		out = append(out, mcp.Server{Name: name, Type: s.Type, Command: s.Command, Args: s.Args,
			Env: s.Env, URL: s.URL, Headers: s.Headers})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ConnectMCP starts the MCP servers of session id in the background:
// servers, or the configured ones when servers is empty (the editor sent
// none). It returns at once; OnMCPStatus reports how they fare. A session
// that already has servers keeps them.
func (r *Runtime) ConnectMCP(id string, servers []mcp.Server) error {
	if len(servers) == 0 {
		servers = ConfiguredMCPServers(r.Config)
	}
	if len(servers) == 0 {
		return nil
	}
	a, ok := r.Agent(id)
	if !ok {
		return errors.New("compositions: no such session: " + id)
	}
	h := &r.mcp
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return r.errClosed()
	}
	if _, ok := h.managers[id]; ok {
		return nil
	}
	c := r.settings.mcp
	m, err := mcp.Start(mcp.Options{
		Session:            id,
		Registry:           r.Tools,
		Servers:            servers,
		Dir:                a.Session().Header().CwdOrEmpty(),
		Version:            r.version,
		StartTimeout:       time.Duration(c.StartTimeoutMs) * time.Millisecond,
		CallTimeout:        time.Duration(c.CallTimeoutMs) * time.Millisecond,
		TrustReadOnlyHints: c.TrustReadOnlyHints,
		Log:                r.Log,
		OnStatus: func(s mcp.Status) {
			h.statuses.Emit(s, func(v any) { r.Log.Error("mcp status observer panicked", "panic", v) })
		},
	})
	if err != nil {
		return err
	}
	if h.managers == nil {
		h.managers = map[string]*mcp.Manager{}
	}
	h.managers[id] = m
	return nil
}

// MCPStatus returns the status of session id's MCP servers, ordered by name.
func (r *Runtime) MCPStatus(id string) []mcp.Status {
	if m := r.mcpManager(id); m != nil {
		return m.Status()
	}
	return nil
}

// OnMCPStatus calls fn after every state change of any session's MCP
// server (from the servers' goroutines; fn must not block).
func (r *Runtime) OnMCPStatus(fn func(mcp.Status)) (unsubscribe func()) {
	return r.mcp.statuses.Subscribe(fn)
}

func (r *Runtime) mcpManager(id string) *mcp.Manager {
	r.mcp.mu.Lock()
	defer r.mcp.mu.Unlock()
	return r.mcp.managers[id]
}

// waitMCP is the agent's ToolsReady: the first request of a step waits for
// the session's servers that are still starting (each bounded by
// mcp.start_timeout_ms).
func (r *Runtime) waitMCP(id string) func(ctx context.Context) {
	return func(ctx context.Context) {
		if m := r.mcpManager(id); m != nil {
			_ = m.Wait(ctx)
		}
	}
}

// closeMCP stops session id's servers and removes their tools.
func (r *Runtime) closeMCP(id string) error {
	r.mcp.mu.Lock()
	m := r.mcp.managers[id]
	delete(r.mcp.managers, id)
	r.mcp.mu.Unlock()
	if m == nil {
		return nil
	}
	return m.Close()
}

// closeAllMCP stops every session's servers; later ConnectMCP calls fail.
func (r *Runtime) closeAllMCP() error {
	r.mcp.mu.Lock()
	r.mcp.closed = true
	ms := r.mcp.managers
	r.mcp.managers = nil
	r.mcp.mu.Unlock()
	var errs []error
	for _, m := range ms {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}

// ProbeMCP starts the configured MCP servers for a workspace, waits until
// each is up or failed (bounded by mcp.start_timeout_ms and ctx), and
// returns their status before stopping them: what dsh mcp list shows.
func ProbeMCP(ctx context.Context, c *config.Config, cwd, version string) ([]mcp.Status, error) {
	servers := ConfiguredMCPServers(c)
	if len(servers) == 0 {
		return nil, nil
	}
	mc, err := config.Get[mcp.Config](c, mcp.ConfigSchema)
	if err != nil {
		return nil, err
	}
	m, err := mcp.Start(mcp.Options{
		Session:      "probe",
		Registry:     tools.NewRegistry(nil),
		Servers:      servers,
		Dir:          cwd,
		Version:      version,
		StartTimeout: time.Duration(mc.StartTimeoutMs) * time.Millisecond,
		CallTimeout:  time.Duration(mc.CallTimeoutMs) * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	waitErr := m.Wait(ctx)
	st := m.Status()
	return st, errors.Join(waitErr, m.Close())
}
