package tui

import (
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/mcp"
)

// fakeMCP serves fixed statuses for whatever session asks and lets the
// test emit state changes.
type fakeMCP struct {
	mu       sync.Mutex
	session  string
	statuses []mcp.Status
	fn       func(mcp.Status)
}

func (f *fakeMCP) MCPStatus(id string) []mcp.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.session = id
	out := make([]mcp.Status, len(f.statuses))
	for i, s := range f.statuses {
		s.Session = id
		out[i] = s
	}
	return out
}

func (f *fakeMCP) OnMCPStatus(fn func(mcp.Status)) func() {
	f.mu.Lock()
	f.fn = fn
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.fn = nil
		f.mu.Unlock()
	}
}

func (f *fakeMCP) emit(s mcp.Status) {
	f.mu.Lock()
	s.Session = f.session
	fn := f.fn
	f.mu.Unlock()
	fn(s)
}

func TestMCPFailuresAreShownAndSlashMCPListsServers(t *testing.T) {
	b := newBackend(t, newScripted())
	fake := &fakeMCP{statuses: []mcp.Status{
		{Name: "github", Transport: "stdio", State: mcp.StateReady, Tools: 12},
		{Name: "docs", Transport: "http", State: mcp.StateFailed, Error: "it could not start: 401 Unauthorized"},
	}}
	d := startUI(t, b, func(o *Options) { o.MCP = fake })
	// A failure from before the UI started is shown at once.
	d.waitText("MCP server docs failed: it could not start: 401 Unauthorized")

	fake.emit(mcp.Status{Name: "github", Transport: "stdio", State: mcp.StateCrashed, Error: "its process ended: exit status 2", Stderr: "fatal: token expired"})
	d.waitText("MCP server github stopped: its process ended: exit status 2", "fatal: token expired")

	d.submit("/mcp")
	d.waitText("MCP servers of this session:", "github", "12 tools", "docs", "http", "failed")
}
