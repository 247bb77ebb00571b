package compositions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// editorClient is an ACP client with its own buffers and terminals: reads
// are served from an in-memory buffer map, and a terminal "runs" every
// command by answering "ran: <command>" with exit code 0.
type editorClient struct {
	acpClient

	mu      sync.Mutex
	buffers map[string]string
	created []sdk.CreateTerminalRequest
	calls   []string
}

func (c *editorClient) note(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
}

func (c *editorClient) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.note("fs/read_text_file")
	c.mu.Lock()
	defer c.mu.Unlock()
	text, ok := c.buffers[p.Path]
	if !ok {
		return sdk.ReadTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": "no buffer"})
	}
	return sdk.ReadTextFileResponse{Content: text}, nil
}

func (c *editorClient) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.note("fs/write_text_file")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buffers[p.Path] = p.Content
	return sdk.WriteTextFileResponse{}, nil
}

func (c *editorClient) CreateTerminal(_ context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	c.note("terminal/create")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.created = append(c.created, p)
	return sdk.CreateTerminalResponse{TerminalId: "editor-term-1"}, nil
}

func (c *editorClient) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.created) == 0 {
		return ""
	}
	return "ran: " + c.created[0].Args[len(c.created[0].Args)-1] + "\n"
}

func (c *editorClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	c.note("terminal/output")
	return sdk.TerminalOutputResponse{Output: c.output(), ExitStatus: &sdk.TerminalExitStatus{ExitCode: sdk.Ptr(0)}}, nil
}

func (c *editorClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	c.note("terminal/wait_for_exit")
	return sdk.WaitForTerminalExitResponse{ExitCode: sdk.Ptr(0)}, nil
}

func (c *editorClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	c.note("terminal/kill")
	return sdk.KillTerminalResponse{}, nil
}

func (c *editorClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	c.note("terminal/release")
	return sdk.ReleaseTerminalResponse{}, nil
}

// editorScript: the model reads main.go, then runs a command, then answers.
const editorScript = `[
 {"kind":"chunks","chunks":[
  {"type":"block-start","index":0,"blockType":"tool-call","id":"call_1","name":"read"},
  {"type":"tool-call-delta","index":0,"argumentsDelta":"{\"file_path\":\"main.go\"}"},
  {"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_1","name":"read","arguments":"{\"file_path\":\"main.go\"}"}},
  {"type":"finish","kind":"tool-calls"}]},
 {"kind":"chunks","chunks":[
  {"type":"block-start","index":0,"blockType":"tool-call","id":"call_2","name":"bash"},
  {"type":"tool-call-delta","index":0,"argumentsDelta":"{\"command\":\"go test ./...\",\"description\":\"Run the tests\"}"},
  {"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_2","name":"bash","arguments":"{\"command\":\"go test ./...\",\"description\":\"Run the tests\"}"}},
  {"type":"finish","kind":"tool-calls"}]},
 {"kind":"chunks","chunks":[
  {"type":"block-start","index":0,"blockType":"text"},
  {"type":"text-delta","index":0,"delta":"Done."},
  {"type":"block-end","index":0,"block":{"type":"text","text":"Done."}},
  {"type":"finish","kind":"stop"}]}
]`

// TestACPSessionUsesTheEditorsBuffersAndTerminals drives the real runtime
// over an ACP connection with a client that offers its file system and
// terminals: the model reads the unsaved buffer, not the disk, and its
// command runs in the editor's terminal.
func TestACPSessionUsesTheEditorsBuffersAndTerminals(t *testing.T) {
	cfg, cwd := replayConfig(t, editorScript)
	main := filepath.Join(cwd, "main.go")
	if err := os.WriteFile(main, []byte("package main // saved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, ACP, cfg)

	cl := &editorClient{acpClient: acpClient{changed: make(chan struct{}, 1)}, buffers: map[string]string{main: "package main // unsaved\n"}}
	conn := connectEditor(t, rt, cl)
	ctx := conn.ctx
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: sdk.ClientCapabilities{
		Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Look and test.")}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %v, %v", res.StopReason, err)
	}
	a, _ := rt.Agent(string(sess.SessionId))
	var results []string
	for _, e := range a.Session().Events(0) {
		if e.Type != session.TypeToolResult {
			continue
		}
		var d struct{ Message session.Message }
		if err := e.DecodeData(&d); err != nil {
			t.Fatal(err)
		}
		results = append(results, session.JoinText(d.Message.Content[0].Content))
	}
	if len(results) != 2 || !strings.Contains(results[0], "1: package main // unsaved") || results[1] != "ran: go test ./...\n[exit code: 0]" {
		t.Fatalf("tool results = %q", results)
	}
	cl.mu.Lock()
	calls := strings.Join(cl.calls, " ")
	cl.mu.Unlock()
	if !strings.HasPrefix(calls, "fs/read_text_file terminal/create") || !strings.HasSuffix(calls, "terminal/release") {
		t.Errorf("client requests = %s", calls)
	}
	conn.end(t)
}
