package compositions

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host/acp/acptest"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/internal/mcptest"
)

func TestMain(m *testing.M) {
	sandbox.MaybeLaunch()
	if mcptest.Serve() {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// acpClient records the updates of its sessions and allows every tool
// call once.
type acpClient struct {
	acptest.NoEditorCapabilities
	mu      sync.Mutex
	text    strings.Builder
	cards   strings.Builder // the text of every tool_call_update
	asked   []string
	changed chan struct{}
}

func (c *acpClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	if u := n.Update.AgentMessageChunk; u != nil && u.Content.Text != nil {
		c.text.WriteString(u.Content.Text.Text)
	}
	if u := n.Update.ToolCallUpdate; u != nil {
		for _, tc := range u.Content {
			if tc.Content != nil && tc.Content.Content.Text != nil {
				c.cards.WriteString(tc.Content.Content.Text.Text + "\n")
			}
		}
	}
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

func (c *acpClient) cardText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cards.String()
}

func (c *acpClient) messages() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text.String()
}

func (c *acpClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	if p.ToolCall.Title != nil {
		c.asked = append(c.asked, *p.ToolCall.Title)
	}
	c.mu.Unlock()
	for _, o := range p.Options {
		if o.Kind == sdk.PermissionOptionKindAllowOnce {
			return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(o.OptionId)}, nil
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
}

// mcpScript is a replay override: the model calls the MCP echo tool, then
// answers with text.
var mcpScript = toolThenDone("mcp__test__echo", `{\"text\":\"from the model\"}`)

func stdioEntry(name, mode, state string) sdk.McpServer {
	cmd, args, env := mcptest.Command(mode, state)
	var vars []sdk.EnvVariable
	for k, v := range env {
		vars = append(vars, sdk.EnvVariable{Name: k, Value: v})
	}
	return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: name, Command: cmd, Args: args, Env: vars}}
}

// TestACPSessionUsesTheEditorsMCPServers drives a real ACP connection: the
// editor's stdio servers start behind session/new, the model (a replay
// script) calls an MCP tool, which asks for approval and returns the
// server's answer; a server that cannot start is reported in the thread;
// the first request's MCP tool schemas are pinned.
func TestACPSessionUsesTheEditorsMCPServers(t *testing.T) {
	cfg, cwd := replayConfig(t, mcpScript)
	rt := newRuntime(t, ACP, cfg)

	cl := &acpClient{changed: make(chan struct{}, 1)}
	conn := connectEditor(t, rt, cl)
	ctx := conn.ctx

	init, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c := init.AgentCapabilities.McpCapabilities; !c.Http || !c.Sse {
		t.Fatalf("mcpCapabilities = %+v, want http and sse", c)
	}
	state := t.TempDir()
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{
		stdioEntry("test", "ok", state),
		stdioEntry("broken", "exit", state),
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Echo something.")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %s", res.StopReason)
	}
	for !strings.Contains(cl.messages(), "MCP server broken failed") {
		select {
		case <-cl.changed:
		case <-ctx.Done():
			t.Fatalf("no notice about the broken server; the thread says %q", cl.messages())
		}
	}
	if msg := cl.messages(); !strings.Contains(msg, "GITHUB_TOKEN is not set") || !strings.Contains(msg, "Done.") {
		t.Fatalf("thread = %q", msg)
	}
	if len(cl.asked) != 1 || cl.asked[0] != "test: echo" {
		t.Fatalf("approvals asked = %v, want one for the MCP tool", cl.asked)
	}

	a, _ := rt.Agent(string(sess.SessionId))
	events := a.Session().Events(0)
	var (
		result string
		header session.RequestHeader
	)
	for _, e := range events {
		switch e.Type {
		case session.TypeToolResult:
			var d struct{ Message session.Message }
			if err := e.DecodeData(&d); err != nil {
				t.Fatal(err)
			}
			for _, b := range d.Message.Content {
				for _, c := range b.Content {
					result += c.Text
				}
			}
		case session.TypeRequestHeader:
			if header.Header.System == "" {
				if err := e.DecodeData(&header); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if result != "echo: from the model" {
		t.Fatalf("logged tool result = %q", result)
	}
	var mcpTools []json.RawMessage
	for _, raw := range header.Header.Tools {
		if bytes.Contains(raw, []byte(`"name":"mcp__`)) {
			mcpTools = append(mcpTools, raw)
		}
	}
	pinned, err := session.Marshal(mcpTools)
	if err != nil {
		t.Fatal(err)
	}
	pretty, err := session.Indent(pinned)
	if err != nil {
		t.Fatal(err)
	}
	goldie.New(t, goldie.WithFixtureDir("testdata")).Assert(t, "mcp-request-tools", []byte(pretty+"\n"))

	pids := mcptest.Pids(state)
	conn.end(t)
	for _, pid := range pids {
		if processAlive(pid) {
			t.Errorf("MCP server %d outlived the connection", pid)
		}
	}
}

// processAlive reports whether pid is a running (not zombie) process.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// hangScript is a replay override: the model calls the MCP tool that
// reports progress and then waits to be cancelled.
const hangScript = `[
 {"kind":"chunks","chunks":[
  {"type":"block-start","index":0,"blockType":"tool-call","id":"call_1","name":"mcp__test__hang"},
  {"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_1","name":"mcp__test__hang","arguments":"{}"}},
  {"type":"usage","usage":{"inputTokens":100,"outputTokens":10}},
  {"type":"finish","kind":"tool-calls"}]}
]`

// TestACPCardShowsMCPProgressAndCancelStopsTheCall: a server's progress
// notification shows in the tool card while the call runs, and the
// editor's session/cancel ends the turn and tells the server
// (notifications/cancelled).
func TestACPCardShowsMCPProgressAndCancelStopsTheCall(t *testing.T) {
	cfg, cwd := replayConfig(t, hangScript)
	rt := newRuntime(t, ACP, cfg)

	cl := &acpClient{changed: make(chan struct{}, 1)}
	conn := connectEditor(t, rt, cl)
	ctx := conn.ctx
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{stdioEntry("test", "ok", state)}})
	if err != nil {
		t.Fatal(err)
	}
	prompted := make(chan sdk.PromptResponse, 1)
	go func() {
		res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Wait.")}})
		if err != nil {
			t.Error(err)
		}
		prompted <- res
	}()
	for !strings.Contains(cl.cardText(), "progress 1/4 waiting") {
		select {
		case <-cl.changed:
		case <-ctx.Done():
			t.Fatalf("the card never showed the server's progress; cards say %q", cl.cardText())
		}
	}
	if err := conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	if res := <-prompted; res.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("stop reason %s, want cancelled", res.StopReason)
	}
	if !mcptest.WaitFile(filepath.Join(state, "cancelled"), 30*time.Second) {
		t.Fatal("the server was not sent notifications/cancelled")
	}
	conn.end(t)
}
