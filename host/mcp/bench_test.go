package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-e9b4dba4/dsh/host/mcp"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	"github.com/seed-e9b4dba4/dsh/internal/mcptest"
)

// BenchmarkEchoThroughTheSDK is the server's own time: one tools/call of
// echo from a bare SDK client over stdio.
func BenchmarkEchoThroughTheSDK(b *testing.B) {
	name, args, env := mcptest.Command("ok", "")
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), mcptest.EnvMode+"="+env[mcptest.EnvMode])
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEchoThroughTheRegistry is the same call as the agent makes it:
// tools.Registry.Run (lookup, schema validation, pipeline) into the
// manager's connection. The difference to BenchmarkEchoThroughTheSDK is
// what dsh adds to an MCP call.
func BenchmarkEchoThroughTheRegistry(b *testing.B) {
	reg := tools.NewRegistry(nil)
	live := session.NewLive(session.Header{Version: session.FormatVersion, ID: "bench"}, nil, session.LiveOptions{})
	defer live.Close()
	name, args, env := mcptest.Command("ok", "")
	m, err := mcp.Start(mcp.Options{Session: "bench", Registry: reg, Servers: []mcp.Server{{Name: "test", Command: name, Args: args, Env: env}}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if err := m.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	call := &tools.Call{CallID: "c", Name: "mcp__test__echo", Arguments: `{"text":"hi"}`, Session: live}
	b.ResetTimer()
	for b.Loop() {
		if res := reg.Run(context.Background(), call); res.IsError {
			b.Fatal(res.Error.Message)
		}
	}
}

// BenchmarkStartReturns is what starting three stdio servers costs the
// caller (session/new): Start returns before any server is up.
func BenchmarkStartReturns(b *testing.B) {
	name, args, env := mcptest.Command("ok", "")
	servers := []mcp.Server{
		{Name: "a", Command: name, Args: args, Env: env},
		{Name: "b", Command: name, Args: args, Env: env},
		{Name: "c", Command: name, Args: args, Env: env},
	}
	for b.Loop() {
		m, err := mcp.Start(mcp.Options{Session: "bench", Registry: tools.NewRegistry(nil), Servers: servers})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = m.Close()
		b.StartTimer()
	}
}
