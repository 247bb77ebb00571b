package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-e9b4dba4/dsh/internal/bench"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
	"github.com/seed-e9b4dba4/dsh/internal/mcptest"
)

// mcpResult is what MCP servers cost the editor (issue 18's targets), the
// built binary run as `dsh acp` in a fresh home each time.
type mcpResult struct {
	// NewSession is session/new answered without servers and with three
	// stdio servers (which finish starting in the background).
	NewSession, NewSession3 latency
	// Call is the first MCP tool call of the session (an echo), from its
	// tool_call to its completed update as the editor sees them; Direct is
	// the same first call made by a bare SDK client on a server it started,
	// the server's own time plus the stdio round trip.
	Call, Direct latency
	RSS          int64
}

// Issue 18's targets.
const (
	targetMCPNewSession = 20 * time.Millisecond
	targetMCPOverhead   = 5 * time.Millisecond
)

func measureMCP(ctx context.Context, bin, server string, n int) (mcpResult, error) {
	var res mcpResult
	env := map[string]string{mcptest.EnvMode: "ok"}
	servers := []bench.StdioServer{
		{Name: "a", Command: server, Env: env},
		{Name: "b", Command: server, Env: env},
		{Name: "c", Command: server, Env: env},
	}
	var bare, three, call, direct []time.Duration
	for range n {
		llm := fakellm.New(fakellm.Reply{Text: "pong"})
		s, err := bench.ACPColdStart(ctx, bench.ColdStartOptions{Bin: bin, BaseURL: llm.URL, Prompt: true})
		llm.Close()
		if err != nil {
			return res, fmt.Errorf("dsh acp without MCP servers: %w", err)
		}
		bare = append(bare, s.NewSession)

		llm = fakellm.New(
			fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "call_1", Name: "mcp__a__echo", Arguments: `{"text":"bench"}`}}},
			fakellm.Reply{Text: "echoed"})
		s, err = bench.ACPColdStart(ctx, bench.ColdStartOptions{Bin: bin, BaseURL: llm.URL, Prompt: true,
			MCPServers: servers, Set: []string{"permissions.mode=bypass"}})
		llm.Close()
		if err != nil {
			return res, fmt.Errorf("dsh acp with three MCP servers: %w", err)
		}
		if s.ToolCall == 0 || !strings.HasPrefix(s.ToolOutput, "completed") || !strings.Contains(s.ToolOutput, "echo: bench") {
			return res, fmt.Errorf("the MCP echo call did not complete as expected (%q)", s.ToolOutput)
		}
		three, call = append(three, s.NewSession), append(call, s.ToolCall)
		res.RSS = max(res.RSS, s.MaxRSS)

		d, err := directEcho(ctx, server)
		if err != nil {
			return res, err
		}
		direct = append(direct, d)
	}
	res.NewSession, res.NewSession3 = percentiles(bare), percentiles(three)
	res.Call, res.Direct = percentiles(call), percentiles(direct)
	return res, nil
}

// directEcho starts the server with a bare SDK client and times its first
// echo call.
func directEcho(ctx context.Context, server string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, server)
	cmd.Env = append(os.Environ(), mcptest.EnvMode+"=ok")
	c := sdk.NewClient(&sdk.Implementation{Name: "dshbench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return 0, fmt.Errorf("start the MCP server with the SDK: %w", err)
	}
	defer cs.Close()
	start := time.Now()
	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "bench"}})
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("echo through the SDK: %w", err)
	}
	if t, ok := firstContent(r).(*sdk.TextContent); !ok || t.Text != "echo: bench" {
		return 0, fmt.Errorf("echo through the SDK returned %+v", r.Content)
	}
	return d, nil
}

func firstContent(r *sdk.CallToolResult) sdk.Content {
	if len(r.Content) == 0 {
		return nil
	}
	return r.Content[0]
}

// rows adds the MCP rows to the table.
func (m mcpResult) rows(row func(...string)) {
	row("ACP session/new, no MCP servers (empty home)", pp(m.NewSession), "", "", "")
	row("ACP session/new with 3 stdio MCP servers", pp(m.NewSession3), "servers start in the background", "with ÷ without "+times(m.NewSession3.P50, m.NewSession.P50, 1), mb(m.RSS))
	row("first MCP tool call, tool_call → completed (editor's view)", pp(m.Call), "bare SDK client's first call "+pp(m.Direct), "dsh adds "+ms(m.overhead())+" (p50)", "")
}

// targets adds issue 18's targets.
func (m mcpResult) targets(row func(...string)) {
	if m.NewSession3.P50 == 0 {
		row("MCP targets (issue 18)", "not measured", "", "n/a", "")
		return
	}
	row("session/new with 3 stdio MCP servers ≤ 20 ms", ms(m.NewSession3.P50), "", verdict(m.NewSession3.P50 <= targetMCPNewSession), "")
	row("first MCP tool call adds ≤ 5 ms over the server's own time", ms(m.overhead()), "", verdict(m.overhead() <= targetMCPOverhead), "")
}

// overhead is what dsh adds to the first call at p50 (never below 0).
func (m mcpResult) overhead() time.Duration { return max(0, m.Call.P50-m.Direct.P50) }
