package tui

import (
	"fmt"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/mcp"
)

// MCP is the composition's view of the sessions' MCP servers.
type MCP interface {
	MCPStatus(id string) []mcp.Status
	OnMCPStatus(fn func(mcp.Status)) (unsubscribe func())
}

// watchMCP shows, in the current session's transcript, every failure or
// crash of one of its servers, including those that happened before the UI
// started. It runs before the event loop; the returned func unsubscribes.
func (u *ui) watchMCP() (unsubscribe func()) {
	if u.opts.MCP == nil {
		return func() {}
	}
	unsub := u.opts.MCP.OnMCPStatus(func(st mcp.Status) {
		if st.Problem() {
			u.post.post(func() { u.reportMCP(st) })
		}
	})
	if u.cur != nil {
		for _, st := range u.opts.MCP.MCPStatus(u.cur.agent.ID()) {
			if st.Problem() {
				u.reportMCP(st)
			}
		}
	}
	return unsub
}

// reportMCP adds a notice for st if it concerns the current session and was
// not shown already. It runs on the UI goroutine.
func (u *ui) reportMCP(st mcp.Status) {
	if u.cur == nil || u.cur.agent.ID() != st.Session {
		return
	}
	key := st.Session + "\x00" + st.Name
	msg := st.Message()
	if u.mcpShown[key] == msg {
		return
	}
	if u.mcpShown == nil {
		u.mcpShown = map[string]string{}
	}
	u.mcpShown[key] = msg
	u.notice(entryError, "%s", sanitize(msg))
}

// mcpCommand lists the current session's MCP servers.
func (u *ui) mcpCommand(string) {
	if u.cur == nil {
		u.notice(entryError, "no session is open")
		return
	}
	if u.opts.MCP == nil {
		u.notice(entryError, "MCP servers are not available in this composition")
		return
	}
	st := u.opts.MCP.MCPStatus(u.cur.agent.ID())
	if len(st) == 0 {
		u.notice(entryNotice, "no MCP servers: add them under mcp.servers in ~/.dsh/config.yaml (dsh mcp list checks them)")
		return
	}
	lines := []string{"MCP servers of this session:"}
	for _, s := range st {
		line := fmt.Sprintf("%-16s %-5s %-8s %s", sanitize(s.Name), s.Transport, s.State, plural(s.Tools, "tool"))
		if s.Problem() {
			line += " — " + sanitize(s.Message())
		}
		lines = append(lines, line)
	}
	u.notice(entryNotice, "%s", strings.Join(lines, "\n"))
}
