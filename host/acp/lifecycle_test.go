package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

func TestInitializeAdvertisesSessionCapabilitiesAndTextPrompts(t *testing.T) {
	h := start(t, newWorld(t))
	resp, err := h.conn.Initialize(h.ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtocolVersion != 1 || resp.AgentInfo == nil || resp.AgentInfo.Name != "dsh" || resp.AgentInfo.Version != "1.2.3" {
		t.Fatalf("identity = %d %+v", resp.ProtocolVersion, resp.AgentInfo)
	}
	c := resp.AgentCapabilities
	if !c.LoadSession || c.SessionCapabilities.List == nil || c.SessionCapabilities.Resume == nil || c.SessionCapabilities.Close == nil {
		t.Errorf("session capabilities = %+v, loadSession %v", c.SessionCapabilities, c.LoadSession)
	}
	if c.SessionCapabilities.Fork != nil || c.SessionCapabilities.AdditionalDirectories != nil || c.Nes != nil || c.Providers != nil {
		t.Errorf("advertises an unstable capability: %+v", c)
	}
	if p := c.PromptCapabilities; p.Image || p.Audio || !p.EmbeddedContext {
		t.Errorf("prompt capabilities = %+v", p)
	}
	raw, _ := json.Marshal(resp)
	if !strings.Contains(string(raw), `"authMethods":[]`) {
		t.Errorf("authMethods is not an empty array: %s", raw)
	}
}

func TestNewSessionRejectsUnusableWorkspaces(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	dir := workspace(t)
	cases := []struct {
		name, cwd, want string
		extra           []string
	}{
		{"relative", "project", "Invalid params: cwd must be an absolute path: project", nil},
		{"missing", filepath.Join(dir, "nope"), "Invalid params: cwd " + filepath.Join(dir, "nope") + " cannot be used: no such directory", nil},
		{"file", filepath.Join(dir, "a.txt"), "Invalid params: cwd is not a directory: " + filepath.Join(dir, "a.txt"), nil},
		{"additional directories", dir, "Invalid params: additionalDirectories is not supported", []string{dir}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.conn.NewSession(h.ctx, sdk.NewSessionRequest{Cwd: tc.cwd, McpServers: []sdk.McpServer{}, AdditionalDirectories: tc.extra})
			re, ok := err.(*sdk.RequestError)
			if !ok || re.Code != -32602 || re.Message != tc.want {
				t.Fatalf("error = %v, want -32602 %q", err, tc.want)
			}
		})
	}
	if got := w.closedIDs(); len(got) != 0 || len(w.agents) != 0 {
		t.Errorf("a rejected request created a session: %v", got)
	}
}

func TestNewSessionIgnoresMCPServersAndReturnsModesAndOptions(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	resp, err := h.conn.NewSession(h.ctx, sdk.NewSessionRequest{Cwd: workspace(t), McpServers: []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: "x", Command: "x", Args: []string{}, Env: []sdk.EnvVariable{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if w.agent(string(resp.SessionId)) == nil {
		t.Fatalf("no agent drives %s", resp.SessionId)
	}
	if resp.Modes == nil || resp.Modes.CurrentModeId != "default" || len(resp.Modes.AvailableModes) != 5 {
		t.Errorf("modes = %+v", resp.Modes)
	}
	var cats []string
	for _, o := range resp.ConfigOptions {
		cats = append(cats, string(*o.Select.Category)+"="+string(o.Select.CurrentValue))
	}
	if want := []string{"mode=default", "model=fake-small"}; !slices.Equal(cats, want) {
		t.Errorf("config options = %v, want %v", cats, want)
	}
}

func TestLoadReplaysTheConversationBeforeAnswering(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	cwd := workspace(t)
	id := h.newSession(cwd)
	w.provider.add(
		chunks(reasoningDelta("let me look"), textDelta("Looking."), toolDelta(0, "call_1", "look", `{"path":"a.txt"}`), finish("tool-calls")),
		reply("", "It says a."),
	)
	if _, err := h.prompt(id, "what is in a.txt?"); err != nil {
		t.Fatal(err)
	}
	live := h.c.take()
	if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}

	if _, err := h.conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	got := kinds(h.c.take())
	want := []string{
		"user_message_chunk:what is in a.txt?",
		"session_info_update:what is in a.txt?",
		"agent_thought_chunk:let me look",
		"agent_message_chunk:Looking.",
		"tool_call:call_1:in_progress",
		"tool_call_update:call_1:completed",
		"agent_message_chunk:It says a.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("replay =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(kinds(live)) == 0 {
		t.Fatal("the live prompt streamed nothing")
	}

	// The loaded session continues.
	w.provider.add(reply("", "Still here."))
	resp, err := h.prompt(id, "again")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt after load = %v, %v", resp.StopReason, err)
	}
}

func TestLoadOfForeignOrUnknownSessionGivesTheSameError(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	mine, theirs := workspace(t), workspace(t)
	foreign := h.newSession(theirs)
	if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: foreign}); err != nil {
		t.Fatal(err)
	}
	load := func(id sdk.SessionId) string {
		_, err := h.conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: mine, McpServers: []sdk.McpServer{}})
		re, ok := err.(*sdk.RequestError)
		if !ok || re.Code != -32002 {
			t.Fatalf("load %s: %v", id, err)
		}
		b, _ := json.Marshal(re)
		return strings.ReplaceAll(string(b), string(id), "<id>")
	}
	f, u := load(foreign), load("00000000-0000-4000-8000-0000000000ff")
	if f != u {
		t.Errorf("foreign %s\nunknown %s", f, u)
	}
	if strings.Contains(f, theirs) {
		t.Errorf("the error reveals the other workspace: %s", f)
	}
	if w.agent(string(foreign)) != nil {
		t.Error("a refused load reopened the session")
	}
}

func TestResumeReattachesWithoutReplay(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	cwd := workspace(t)
	id := h.newSession(cwd)
	w.provider.add(reply("", "one"))
	if _, err := h.prompt(id, "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	h.c.take()
	resp, err := h.conn.ResumeSession(h.ctx, sdk.ResumeSessionRequest{SessionId: id, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Modes == nil || len(resp.ConfigOptions) == 0 {
		t.Errorf("resume answer lacks modes or options: %+v", resp)
	}
	w.provider.add(reply("", "two"))
	if _, err := h.prompt(id, "second"); err != nil {
		t.Fatal(err)
	}
	got := kinds(h.c.take())
	if want := []string{"agent_message_chunk:two"}; !slices.Equal(got, want) {
		t.Errorf("updates after resume = %v, want %v (no replay)", got, want)
	}
}

func TestCloseSessionFlushesAndForgetsIt(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if got := w.closedIDs(); !slices.Equal(got, []string{string(id)}) {
		t.Errorf("closed = %v", got)
	}
	_, err := h.prompt(id, "hello")
	if re, ok := err.(*sdk.RequestError); !ok || re.Message != "Resource not found: unknown session: "+string(id) {
		t.Errorf("prompt after close: %v", err)
	}
	_, err = h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id})
	if re, ok := err.(*sdk.RequestError); !ok || re.Code != -32002 {
		t.Errorf("second close: %v", err)
	}
}

func TestInputEndClosesEverySessionAndServeReturnsNil(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	a, b := h.newSession(workspace(t)), h.newSession(workspace(t))
	if err := h.stop(); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	want := []string{string(a), string(b)}
	slices.Sort(want)
	if got := w.closedIDs(); !slices.Equal(got, want) {
		t.Errorf("closed = %v, want %v", got, want)
	}
	if w.tools.Approver() != nil {
		t.Error("Serve left its approver installed")
	}
}

func TestServeReturnsWhenItsContextEnds(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	in, keepOpen := io.Pipe()
	defer keepOpen.Close()
	clientIn, out := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, in, out, Options{Backend: Ready(Backend{Sessions: w, Catalog: w.query, Tools: w.tools, Permissions: w.perms})})
		_ = out.Close()
	}()
	conn := sdk.NewClientSideConnection(newClient(), keepOpen, clientIn)
	if _, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: workspace(t), McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if n := len(w.closedIDs()); n != 1 {
		t.Errorf("%d sessions closed, want 1", n)
	}
}

// A scripted client writes its requests and closes its output at once:
// every request received before the end still gets its answer.
func TestRequestsBeforeTheEndOfInputAreAnswered(t *testing.T) {
	w := newWorld(t)
	cwd := workspace(t)
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, cwd),
		`{"jsonrpc":"2.0","id":3,"method":"session/list","params":{}}`,
	}
	var out lockedBuffer
	err := Serve(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out,
		Options{Backend: Ready(Backend{Sessions: w, Catalog: w.query, Tools: w.tools, Permissions: w.perms})})
	if err != nil {
		t.Fatal(err)
	}
	answered := map[float64]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var f map[string]any
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("frame %q: %v", l, err)
		}
		if f["error"] != nil {
			t.Errorf("request %v failed: %v", f["id"], f["error"])
		}
		if id, ok := f["id"].(float64); ok {
			answered[id] = true
		}
	}
	if len(answered) != 3 {
		t.Errorf("answered %v, want 1, 2 and 3", answered)
	}
	if n := len(w.closedIDs()); n != 1 {
		t.Errorf("%d sessions closed at the end of input, want 1", n)
	}
}
