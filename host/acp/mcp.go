package acp

import (
	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/mcp"
)

// MCP connects the MCP servers an editor sends with session/new,
// session/load and session/resume; the composition's runtime implements
// it. Without one, dsh advertises no MCP transports beyond the stdio every
// agent must accept, and ignores the servers with a warning.
type MCP interface {
	// ConnectMCP starts session id's servers in the background and returns
	// at once; an empty list means the user's configured servers. A session
	// that has servers keeps them.
	ConnectMCP(id string, servers []mcp.Server) error
	// OnMCPStatus reports every state change of a server.
	OnMCPStatus(fn func(mcp.Status)) (unsubscribe func())
}

// mcpCapabilities is what initialize advertises: http and sse when MCP is
// wired (stdio needs no capability).
func (s *server) mcpCapabilities() sdk.McpCapabilities {
	return sdk.McpCapabilities{Http: s.opts.RemoteMCP, Sse: s.opts.RemoteMCP}
}

// connectMCP hands the request's servers to the composition.
func (s *server) connectMCP(ss *sess, servers []sdk.McpServer) {
	if s.b.MCP == nil {
		return
	}
	if err := s.b.MCP.ConnectMCP(ss.id, fromACP(servers)); err != nil {
		s.log.Warn("acp: MCP servers not started", "session", ss.id, "err", err)
	}
}

// watchMCP tells each session's client, in its thread, when one of its
// servers failed or crashed: which server, why, and its stderr tail.
func (s *server) watchMCP() (unsubscribe func()) {
	if s.b.MCP == nil {
		return func() {}
	}
	return s.b.MCP.OnMCPStatus(func(st mcp.Status) {
		if !st.Problem() {
			return
		}
		s.mu.Lock()
		ss := s.sessions[st.Session]
		s.mu.Unlock()
		if ss != nil {
			ss.out.Push(sdk.UpdateAgentMessageText("\n\n[" + st.Message() + "]\n\n"))
		}
	})
}

// fromACP converts the protocol's server entries. An entry of a transport
// dsh does not speak (acp) becomes a server that fails with a clear reason.
func fromACP(in []sdk.McpServer) []mcp.Server {
	out := make([]mcp.Server, 0, len(in))
	for _, s := range in {
		switch {
		case s.Stdio != nil:
			env := make(map[string]string, len(s.Stdio.Env))
			for _, e := range s.Stdio.Env {
				env[e.Name] = e.Value
			}
			out = append(out, mcp.Server{Name: s.Stdio.Name, Type: mcp.TransportStdio,
				Command: s.Stdio.Command, Args: s.Stdio.Args, Env: env})
		case s.Http != nil:
			out = append(out, mcp.Server{Name: s.Http.Name, Type: mcp.TransportHTTP, URL: s.Http.Url, Headers: headers(s.Http.Headers)})
		case s.Sse != nil:
			out = append(out, mcp.Server{Name: s.Sse.Name, Type: mcp.TransportSSE, URL: s.Sse.Url, Headers: headers(s.Sse.Headers)})
		case s.Acp != nil:
			out = append(out, mcp.Server{Name: s.Acp.Name, Type: "acp"})
		}
	}
	return out
}

func headers(in []sdk.HttpHeader) map[string]string {
	out := make(map[string]string, len(in))
	for _, h := range in {
		out[h.Name] = h.Value
	}
	return out
}
