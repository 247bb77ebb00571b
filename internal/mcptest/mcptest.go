// Package mcptest is a small MCP server for tests, built on the official Go
// SDK's server side: a test binary re-executes itself as the server (Serve
// from TestMain, Command for the entry) over stdio, or mounts Handler over
// streamable HTTP. Its tools exercise what a client must handle: a text
// round trip, pagination, list_changed, progress, images, tool errors, a
// crash mid-call and a hang that only cancellation ends.
//
// Modes (DSH_MCPTEST_MODE) choose how the stdio server behaves from the
// start: "ok", "exit" (writes to stderr and exits 1), "garbage" (writes
// non-JSON to stdout), "hang" (never answers initialize), "crash-once"
// (like ok, but its first process crashes in the crash tool while later
// ones answer it; see DSH_MCPTEST_STATE), "linger" (like ok, but it keeps
// running after its stdin closed).
package mcptest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment variables of a re-executed server.
const (
	EnvMode = "DSH_MCPTEST_MODE"
	// EnvState is a directory where the server records events for the test
	// (pid, cancelled calls, crash markers).
	EnvState = "DSH_MCPTEST_STATE"
)

// Serve runs the stdio server and reports true when this process is one
// (EnvMode is set); TestMain then exits. Otherwise it returns false at once.
func Serve() bool {
	mode := os.Getenv(EnvMode)
	if mode == "" {
		return false
	}
	state := os.Getenv(EnvState)
	if state != "" {
		_ = os.WriteFile(filepath.Join(state, fmt.Sprintf("pid-%d", os.Getpid())), nil, 0o600)
	}
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: GITHUB_TOKEN is not set")
		os.Exit(1)
	case "garbage":
		fmt.Println("Welcome to the server! This is not JSON-RPC.")
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "hang":
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	s := NewServer(state, mode == "crash-once")
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
	}
	if mode == "linger" {
		// A server that outlives its stdin: only killing it ends it.
		select {}
	}
	return true
}

// Command returns the command line and environment that start this test
// binary as a stdio server in mode, recording into state ("" for none).
func Command(mode, state string) (command string, args []string, env map[string]string) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	env = map[string]string{EnvMode: mode}
	if state != "" {
		env[EnvState] = state
	}
	return exe, []string{"-test.run=^$"}, env
}

// Handler serves the same server over streamable HTTP.
func Handler(state string) http.Handler {
	s := NewServer(state, false)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
}

// SSEHandler serves the same server over the 2024-11-05 SSE transport.
func SSEHandler(state string) http.Handler {
	s := NewServer(state, false)
	return sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type emptyIn struct{}

// NewServer builds the test server. Pages hold two tools, so listing its
// six tools takes three pages.
func NewServer(state string, crashOnce bool) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mcptest", Version: "1.0.0"}, &sdk.ServerOptions{PageSize: 2})
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "add_tool", Description: "Add the tool named late (sends list_changed)."},
		func(context.Context, *sdk.CallToolRequest, emptyIn) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(s, &sdk.Tool{Name: "late", Description: "A tool added at run time."},
				func(context.Context, *sdk.CallToolRequest, emptyIn) (*sdk.CallToolResult, any, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late tool ran"}}}, nil, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "added"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exit the server in the middle of the call."},
		func(context.Context, *sdk.CallToolRequest, emptyIn) (*sdk.CallToolResult, any, error) {
			marker := filepath.Join(state, "crashed")
			if crashOnce {
				if _, err := os.Stat(marker); err == nil {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "survived"}}}, nil, nil
				}
			}
			if state != "" {
				_ = os.WriteFile(marker, nil, 0o600)
			}
			fmt.Fprintln(os.Stderr, "panic: the crash tool was called")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answer; record the cancellation."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ emptyIn) (*sdk.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 4, Message: "waiting"})
			}
			if state != "" {
				_ = os.WriteFile(filepath.Join(state, "hanging"), nil, 0o600)
			}
			<-ctx.Done()
			if state != "" {
				_ = os.WriteFile(filepath.Join(state, "cancelled"), nil, 0o600)
			}
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(s, &sdk.Tool{Name: "picture", Description: "Return an image, a resource and text."},
		func(context.Context, *sdk.CallToolRequest, emptyIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a red dot:"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG fake")},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "the notes"}},
			}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Report a tool error."},
		func(context.Context, *sdk.CallToolRequest, emptyIn) (*sdk.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("the repository is archived")
		})
	return s
}

// WaitFile waits until path exists or the timeout passes; tests use it to
// observe a server process's side effects.
func WaitFile(path string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// Pids returns the pids the servers recorded in state.
func Pids(state string) []int {
	entries, _ := os.ReadDir(state)
	var out []int
	for _, e := range entries {
		var pid int
		if n, _ := fmt.Sscanf(e.Name(), "pid-%d", &pid); n == 1 && strings.HasPrefix(e.Name(), "pid-") {
			out = append(out, pid)
		}
	}
	return out
}
