package compositions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// bashScript is a replay override: the model runs command with bash, then
// answers with text.
func bashScript(command string) string {
	return toolThenDone("bash", fmt.Sprintf(`{\"command\":\"%s\",\"description\":\"edit the hosts file\"}`, command))
}

// escalatingClient answers permission requests with allow once and records
// what it was asked.
type escalatingClient struct {
	acpClient
	mu      sync.Mutex
	titles  []string
	reasons []string
}

func (c *escalatingClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	title := ""
	if p.ToolCall.Title != nil {
		title = *p.ToolCall.Title
	}
	c.titles = append(c.titles, title)
	reason := ""
	for _, tc := range p.ToolCall.Content {
		if tc.Content != nil && tc.Content.Content.Text != nil {
			reason += tc.Content.Content.Text.Text
		}
	}
	c.reasons = append(c.reasons, reason)
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow-once")}, nil
}

// TestACPAutoModeAsksToRunASandboxDenialOutside drives a real ACP
// connection in permission mode auto: the model's command writes outside
// the workspace, the sandbox denies it, and the editor is asked whether to
// run it outside the sandbox (and it then runs). Without a sandbox on this
// machine, the command asks before it runs instead, saying why.
func TestACPAutoModeAsksToRunASandboxDenialOutside(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "etc-hosts")
	cfg, cwd := replayConfig(t, bashScript("echo 127.0.0.1 evil >> "+outside), "permissions.mode=auto")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(t.Context(), Options{Config: cfg, Kind: ACP, SandboxLauncher: exe})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })

	cl := &escalatingClient{acpClient: acpClient{changed: make(chan struct{}, 1)}}
	conn := connectEditor(t, rt, cl)
	ctx := conn.ctx
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Modes == nil || sess.Modes.CurrentModeId != "auto" {
		t.Fatalf("modes = %+v, want auto current", sess.Modes)
	}
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("Add a host.")}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %v, %+v", err, res)
	}
	conn.end(t)

	got, err := os.ReadFile(outside)
	if err != nil || string(got) != "127.0.0.1 evil\n" {
		t.Fatalf("the approved command's file = %q, %v; want it written once, by the run outside the sandbox", got, err)
	}
	if len(cl.titles) != 1 {
		t.Fatalf("permission requests %q, want exactly one", cl.titles)
	}
	cards := cl.cardText()
	if !rt.Permissions.SandboxSupport().Available {
		if !strings.HasPrefix(cl.titles[0], "edit the hosts file") {
			t.Fatalf("without a sandbox the ask is an ordinary one; got %q", cl.titles[0])
		}
		return
	}
	if cl.titles[0] != "Run outside the sandbox? edit the hosts file" || !strings.Contains(cl.reasons[0], "denied write "+outside) {
		t.Fatalf("ask = %q, reason %q", cl.titles[0], cl.reasons[0])
	}
	if !strings.Contains(cards, "[ran outside the sandbox, approved by the user after the sandbox denied write "+outside+"]") {
		t.Fatalf("tool card does not say it ran outside the sandbox:\n%s", cards)
	}
}
