package snapshots

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/acp/acptest"
)

// step is one operation of a scenario's input script.
type step struct {
	Op string `json:"op"`
	// As names the session a newSession creates; Session refers to it.
	As      string `json:"as,omitempty"`
	Session string `json:"session,omitempty"`
	// Cwd is "other" for the second workspace; empty means the scenario's.
	Cwd  string `json:"cwd,omitempty"`
	Text string `json:"text,omitempty"`
	// Mode and Value configure setMode and setConfigOption.
	Option string `json:"option,omitempty"`
	Value  string `json:"value,omitempty"`
}

// client records nothing itself (the transcript is the raw output); it
// answers permission requests from the script and lets the driver wait for
// updates.
type client struct {
	acptest.NoEditorCapabilities
	mu       sync.Mutex
	answers  []string // permission option kinds, FIFO
	onUpdate func(sdk.SessionNotification)
	// cancelOnAsk makes the next permission request cancel the prompt and
	// wait for the agent to withdraw the request.
	cancelOnAsk func()
}

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	fn := c.onUpdate
	c.mu.Unlock()
	if fn != nil {
		fn(n)
	}
	return nil
}

func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	cancel := c.cancelOnAsk
	c.cancelOnAsk = nil
	var kind string
	if cancel == nil && len(c.answers) > 0 {
		kind, c.answers = c.answers[0], c.answers[1:]
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		// The agent withdraws its request ($/cancel_request) once the
		// turn is cancelled; answering after that keeps the transcript
		// independent of timing.
		<-ctx.Done()
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	for _, o := range p.Options {
		if string(o.Kind) == kind {
			return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(o.OptionId)}, nil
		}
	}
	if kind != "" {
		return sdk.RequestPermissionResponse{}, fmt.Errorf("the scenario answers %q, which the request does not offer", kind)
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
}

// recorder keeps every byte the agent wrote.
type recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *recorder) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

// drive plays the script against an agent reached through toAgent (its
// stdin) and fromAgent (its stdout), closes its input and returns what it
// wrote. Requests that fail are part of the transcript, not test failures.
func drive(t *testing.T, sc *scenario, e *env, toAgent io.WriteCloser, fromAgent io.Reader) []byte {
	t.Helper()
	rec := &recorder{}
	cl := &client{answers: append([]string(nil), sc.Input.PermissionAnswers...)}
	conn := sdk.NewClientSideConnection(cl, toAgent, io.TeeReader(fromAgent, rec))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sessions := map[string]sdk.SessionId{}
	sid := func(name string) sdk.SessionId {
		if id, ok := sessions[name]; ok {
			return id
		}
		return sdk.SessionId(name) // an unknown name is sent as is
	}
	cwdOf := func(s step) string {
		if s.Cwd == "other" {
			return e.other
		}
		return e.cwd
	}
	for i, s := range sc.Input.Steps {
		var err error
		switch s.Op {
		case "initialize":
			_, err = conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
		case "newSession":
			var resp sdk.NewSessionResponse
			resp, err = conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwdOf(s), McpServers: []sdk.McpServer{}})
			sessions[s.As] = resp.SessionId
		case "prompt":
			_, err = conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid(s.Session), Prompt: []sdk.ContentBlock{sdk.TextBlock(s.Text)}})
		case "promptAndCancel":
			// Cancel once the model has started to answer.
			started := make(chan struct{})
			var once sync.Once
			cl.mu.Lock()
			cl.onUpdate = func(n sdk.SessionNotification) {
				if n.Update.AgentMessageChunk != nil {
					once.Do(func() { close(started) })
				}
			}
			cl.mu.Unlock()
			done := make(chan error, 1)
			go func() {
				_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid(s.Session), Prompt: []sdk.ContentBlock{sdk.TextBlock(s.Text)}})
				done <- err
			}()
			select {
			case <-started:
			case <-ctx.Done():
				t.Fatalf("step %d: the model never started answering", i)
			}
			err = conn.Cancel(ctx, sdk.CancelNotification{SessionId: sid(s.Session)})
			if perr := <-done; perr != nil {
				t.Logf("step %d: prompt answered %v", i, perr)
			}
			cl.mu.Lock()
			cl.onUpdate = nil
			cl.mu.Unlock()
		case "promptCancelOnPermission":
			id := sid(s.Session)
			cl.mu.Lock()
			cl.cancelOnAsk = func() {
				if err := conn.Cancel(ctx, sdk.CancelNotification{SessionId: id}); err != nil {
					t.Errorf("cancel: %v", err)
				}
			}
			cl.mu.Unlock()
			_, err = conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(s.Text)}})
		case "closeSession":
			_, err = conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: sid(s.Session)})
		case "loadSession":
			_, err = conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sid(s.Session), Cwd: cwdOf(s), McpServers: []sdk.McpServer{}})
		case "resumeSession":
			_, err = conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: sid(s.Session), Cwd: cwdOf(s)})
		case "listSessions":
			req := sdk.ListSessionsRequest{}
			if s.Cwd != "all" {
				req.Cwd = sdk.Ptr(cwdOf(s))
			}
			_, err = conn.ListSessions(ctx, req)
		case "setConfigOption":
			_, err = conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
				SessionId: sid(s.Session), ConfigId: sdk.SessionConfigId(s.Option), Value: sdk.SessionConfigValueId(s.Value),
			}})
		default:
			t.Fatalf("step %d: unknown op %q", i, s.Op)
		}
		if err != nil {
			t.Logf("step %d (%s): %v", i, s.Op, err)
		}
	}
	if err := toAgent.Close(); err != nil {
		t.Errorf("closing the agent's input: %v", err)
	}
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the agent did not close its output after its input ended")
	}
	return rec.Bytes()
}
