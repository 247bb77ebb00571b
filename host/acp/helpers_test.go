package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/acp/acptest"
	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// ---- model ---------------------------------------------------------------

// call serves one scripted model call.
type call func(ctx context.Context, yield func(llm.Chunk) error) error

// fakeProvider serves scripted calls in order, whatever the session.
type fakeProvider struct {
	mu    sync.Mutex
	calls []call
}

func (p *fakeProvider) Name() string { return "fake" }
func (p *fakeProvider) Models() []llm.ModelInfo {
	return []llm.ModelInfo{{ID: "fake-small", Name: "Fake Small"}, {ID: "fake-large", Name: "Fake Large", Efforts: []string{"low", "high"}, DefaultEffort: "high"}}
}
func (p *fakeProvider) Model(id string) llm.ModelInfo { return llm.ModelInfo{ID: id} }

func (p *fakeProvider) add(calls ...call) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, calls...)
}

func (p *fakeProvider) Stream(ctx context.Context, _ llm.Request, yield func(llm.Chunk) error) error {
	p.mu.Lock()
	if len(p.calls) == 0 {
		p.mu.Unlock()
		return llm.Failf(llm.CodeReplay, "fake script exhausted")
	}
	c := p.calls[0]
	p.calls = p.calls[1:]
	p.mu.Unlock()
	return c(ctx, yield)
}

func chunks(cs ...llm.Chunk) call {
	return func(ctx context.Context, yield func(llm.Chunk) error) error {
		for _, c := range cs {
			if err := yield(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// reply streams reasoning (optional) and text deltas, then finishes.
func reply(reasoning string, texts ...string) call {
	var cs []llm.Chunk
	if reasoning != "" {
		cs = append(cs, llm.Chunk{Type: llm.ChunkReasoningDelta, Index: 0, Delta: reasoning})
	}
	for _, t := range texts {
		cs = append(cs, llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Delta: t})
	}
	return chunks(append(cs, llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishStop})...)
}

// toolCalls asks for the given calls (name, JSON arguments pairs).
func toolCalls(nameArgs ...string) call {
	var cs []llm.Chunk
	for i := 0; i < len(nameArgs); i += 2 {
		cs = append(cs, llm.Chunk{Type: llm.ChunkToolCallDelta, Index: i / 2, ID: fmt.Sprintf("call_%d", i/2+1), Name: nameArgs[i], ArgumentsDelta: nameArgs[i+1]})
	}
	return chunks(append(cs, llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishToolCalls})...)
}

// hang streams "partial" and waits for cancellation.
func hang(ctx context.Context, yield func(llm.Chunk) error) error {
	if err := yield(llm.Chunk{Type: llm.ChunkTextDelta, Index: 0, Delta: "partial"}); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// ---- sessions ------------------------------------------------------------

// world is a composition in miniature: live sessions over an in-memory
// "disk", a query service over both, real tools, permissions and agents.
type world struct {
	t        *testing.T
	provider *fakeProvider
	tools    *tools.Registry
	perms    *permissions.Service
	live     *session.Registry
	query    *sessionquery.Service
	disk     *memDisk

	mu     sync.Mutex
	agents map[string]*agent.Agent
	next   int
	closed []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{
		t:        t,
		provider: &fakeProvider{},
		tools:    tools.NewRegistry(nil),
		live:     session.NewRegistry(),
		disk:     &memDisk{logs: map[string]*memLog{}},
		agents:   map[string]*agent.Agent{},
	}
	w.perms = permissions.New(w.tools, permissions.ModeDefault)
	w.perms.Install()
	// As the runtime does: a mode change is recorded in the session's log.
	t.Cleanup(w.perms.OnModeChange(func(c permissions.ModeChange) {
		if a := w.agent(c.SessionID); a != nil {
			if err := a.RecordSettings(); err != nil {
				t.Error(err)
			}
		}
	}))
	registerFakeTools(t, w.tools)
	q, err := sessionquery.New(sessionquery.DefaultConfig(), w.live)
	if err != nil {
		t.Fatal(err)
	}
	q.Mount(w.disk)
	w.query = q
	return w
}

func (w *world) newID() string {
	_, id := w.nextID()
	return id
}

func (w *world) nextID() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	return w.next, fmt.Sprintf("00000000-0000-4000-8000-%012x", w.next)
}

// NewSession stamps sessions with increasing creation times, so listing
// order is creation order.
func (w *world) NewSession(_ context.Context, cwd string) (*agent.Agent, error) {
	n, id := w.nextID()
	h := session.Header{Version: session.FormatVersion, ID: id, CreatedAt: int64(1000 + n), Cwd: session.Ptr(cwd), DelegationDepth: session.Ptr(0)}
	return w.start(h, nil, false)
}

func (w *world) ResumeSession(_ context.Context, id string) (*agent.Agent, error) {
	w.mu.Lock()
	if a, ok := w.agents[id]; ok {
		w.mu.Unlock()
		return a, nil
	}
	w.mu.Unlock()
	h, events, err := w.disk.Inspect(context.Background(), id)
	if err != nil {
		return nil, err
	}
	return w.start(h, events, true)
}

func (w *world) ForkSession(_ context.Context, id string, boundary int) (*agent.Agent, error) {
	var src session.Header
	var events []session.Event
	if a := w.agent(id); a != nil {
		src, events = a.Session().Snapshot()
	} else {
		var err error
		if src, events, err = w.disk.Inspect(context.Background(), id); err != nil {
			return nil, err
		}
	}
	n, child := w.nextID()
	h, seed, err := session.Fork(src, events, boundary, child, int64(1000+n))
	if err != nil {
		return nil, err
	}
	return w.start(h, seed, true)
}

func (w *world) start(h session.Header, events []session.Event, resumed bool) (*agent.Agent, error) {
	live := session.NewLive(h, events, session.LiveOptions{Sink: w.disk.sink(h, events), Now: fixedNow})
	if err := w.live.Attach(live); err != nil {
		return nil, err
	}
	a, err := agent.New(agent.Options{
		Live:     live,
		Provider: w.provider,
		Tools:    w.tools,
		Model:    "fake-small",
		Resumed:  resumed,
		Mode:     func() string { return string(w.perms.Mode(h.ID)) },
		Retry:    llm.RetryPolicy{MaxRetries: 2, Codes: []string{llm.CodeEmptyResponse, llm.CodeServer}, InitialDelay: time.Millisecond, MaxDelay: time.Millisecond},
		Now:      fixedNow,
		NewID:    w.newID,
		Sleep:    func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		return nil, err
	}
	// As the runtime does: a continued session gets its recorded mode.
	if st, ok := session.LastSettings(events); ok && st.Mode != "" {
		if err := w.perms.SetMode(h.ID, permissions.Mode(st.Mode)); err != nil {
			return nil, err
		}
	}
	w.mu.Lock()
	w.agents[h.ID] = a
	w.mu.Unlock()
	return a, nil
}

func (w *world) CloseSession(a *agent.Agent) error {
	w.mu.Lock()
	delete(w.agents, a.ID())
	w.closed = append(w.closed, a.ID())
	w.mu.Unlock()
	err := a.Close()
	w.live.Detach(a.Session())
	w.perms.Forget(a.ID())
	return errors.Join(err, a.Session().Close())
}

func (w *world) agent(id string) *agent.Agent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.agents[id]
}

func (w *world) closedIDs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := append([]string(nil), w.closed...)
	sort.Strings(out)
	return out
}

func fixedNow() time.Time { return time.UnixMilli(1_767_225_600_000) }

// memDisk is the persisted logs: every live session mirrors into it.
type memDisk struct {
	mu   sync.Mutex
	logs map[string]*memLog
}

type memLog struct {
	header session.Header
	events []session.Event
}

type memSink struct {
	d  *memDisk
	id string
}

func (d *memDisk) sink(h session.Header, seed []session.Event) session.Sink {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.logs[h.ID]; !ok {
		d.logs[h.ID] = &memLog{header: h, events: session.CloneEvents(seed)}
	}
	return memSink{d, h.ID}
}

func (s memSink) Append(events ...session.Event) error {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	l := s.d.logs[s.id]
	l.events = append(l.events, session.CloneEvents(events)...)
	return nil
}
func (memSink) Flush() error { return nil }
func (memSink) Close() error { return nil }

func (d *memDisk) List(context.Context) ([]sessionquery.PersistedSnapshot, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []sessionquery.PersistedSnapshot
	for id, l := range d.logs {
		out = append(out, sessionquery.PersistedSnapshot{Header: l.header.Clone(), Revision: fmt.Sprintf("%s:%d", id, len(l.events))})
	}
	return out, nil
}

func (d *memDisk) Inspect(_ context.Context, id string) (session.Header, []session.Event, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l, ok := d.logs[id]
	if !ok {
		return session.Header{}, nil, sessionquery.Errorf(sessionquery.CodeSessionNotFound, "session %s not found", id)
	}
	return l.header.Clone(), session.CloneEvents(l.events), nil
}

func (d *memDisk) IsCorrupt(error) bool { return false }

// ---- tools ---------------------------------------------------------------

func registerFakeTools(t *testing.T, reg *tools.Registry) {
	t.Helper()
	type pathArgs struct {
		Path string `json:"path"`
	}
	abs := func(call *tools.Call) string {
		var a pathArgs
		_ = call.Decode(&a)
		if filepath.IsAbs(a.Path) {
			return a.Path
		}
		return filepath.Join(call.Cwd, a.Path)
	}
	defs := []*tools.Definition{
		{
			Name: "look", Description: "Look at a file.", Effect: tools.EffectRead,
			Parameters: tools.Object(tools.Req("path", tools.String("Path."))),
			Output:     tools.StringOutput,
			Execute: func(_ context.Context, call *tools.Call) (any, error) {
				return "looked at " + filepath.Base(abs(call)), nil
			},
			ConcurrencySafe: func(*tools.Call) bool { return true },
			PresentCall: func(call *tools.Call) *tools.CallView {
				p := abs(call)
				return &tools.CallView{Kind: tools.KindRead, Title: "Look " + filepath.Base(p), Locations: []tools.FileLocation{{Path: p, Line: 3}}, RawInput: json.RawMessage(call.Args)}
			},
		},
		{
			Name: "change", Description: "Change a file.", Effect: tools.EffectWrite,
			Parameters: tools.Object(tools.Req("path", tools.String("Path."))),
			Output:     tools.StringOutput,
			Execute: func(_ context.Context, call *tools.Call) (any, error) {
				return "changed " + filepath.Base(abs(call)), nil
			},
			PresentCall: func(call *tools.Call) *tools.CallView {
				p := abs(call)
				old := "old\n"
				return &tools.CallView{Kind: tools.KindEdit, Title: "Change " + filepath.Base(p), Locations: []tools.FileLocation{{Path: p}}, RawInput: json.RawMessage(call.Args),
					Diff: &tools.Diff{Path: p, OldText: &old, NewText: "new\n"}}
			},
			LoggedDiff: func(call *tools.Call) *tools.Diff {
				old := "logged old\n"
				return &tools.Diff{Path: abs(call), OldText: &old, NewText: "logged new\n"}
			},
		},
		{
			Name: "run", Description: "Run a command.", Effect: tools.EffectExecute,
			Parameters: tools.Object(tools.Req("command", tools.String("Command."))),
			Output:     tools.StringOutput,
			Execute: func(_ context.Context, call *tools.Call) (any, error) {
				return "ran ```ok```\n[exit code: 0]", nil
			},
			PresentCall: func(call *tools.Call) *tools.CallView {
				return &tools.CallView{Kind: tools.KindExecute, Title: "Run it", RawInput: json.RawMessage(call.Args)}
			},
		},
		{
			Name: "plan", Description: "Record a plan.", Effect: tools.EffectState,
			Parameters: tools.Object(),
			Output:     tools.StringOutput,
			Execute: func(_ context.Context, call *tools.Call) (any, error) {
				_, err := call.Session.Append(session.TypeTodoWrite, session.TodoWrite{Todos: []session.Todo{
					{Content: "read", Status: session.TodoCompleted}, {Content: "fix", Status: session.TodoInProgress}, {Content: "test", Status: session.TodoPending},
				}})
				return "planned", err
			},
		},
	}
	for _, d := range defs {
		if _, err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
}

// ---- client --------------------------------------------------------------

// client is an ACP client that records updates and answers permission
// requests with answer (cancelled when nil).
type client struct {
	acptest.NoEditorCapabilities
	mu          sync.Mutex
	updates     []sdk.SessionNotification
	permissions []sdk.RequestPermissionRequest
	answer      func(sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error)
	// onUpdate, when set, sees every update as it arrives.
	onUpdate func(sdk.SessionNotification)
	// commands are the available_commands_update notifications, kept
	// apart from updates, by session; announced is closed (and replaced)
	// when one arrives.
	commands  map[sdk.SessionId][]sdk.AvailableCommand
	announced chan struct{}
}

func newClient() *client {
	return &client{commands: map[sdk.SessionId][]sdk.AvailableCommand{}, announced: make(chan struct{})}
}

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	if cu := n.Update.AvailableCommandsUpdate; cu != nil {
		c.commands[n.SessionId] = cu.AvailableCommands
		close(c.announced)
		c.announced = make(chan struct{})
		c.mu.Unlock()
		return nil
	}
	c.updates = append(c.updates, n)
	fn := c.onUpdate
	c.mu.Unlock()
	if fn != nil {
		fn(n)
	}
	return nil
}

func (c *client) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.permissions = append(c.permissions, p)
	answer := c.answer
	c.mu.Unlock()
	if answer == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return answer(p)
}

// commandsOf waits until the session's commands were announced.
func (c *client) commandsOf(t *testing.T, id sdk.SessionId) []sdk.AvailableCommand {
	t.Helper()
	for {
		c.mu.Lock()
		cmds, ok := c.commands[id]
		ch := c.announced
		c.mu.Unlock()
		if ok {
			return cmds
		}
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("session %s: no available_commands_update", id)
		}
	}
}

func (c *client) take() []sdk.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.updates
	c.updates = nil
	return out
}

func (c *client) permissionRequests() []sdk.RequestPermissionRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.RequestPermissionRequest(nil), c.permissions...)
}

func selected(id string) func(sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return func(sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(id))}, nil
	}
}

// ---- harness -------------------------------------------------------------

// harness runs Serve over pipes with an SDK client on the other side.
type harness struct {
	t      *testing.T
	w      *world
	c      *client
	conn   *sdk.ClientSideConnection
	in     *io.PipeWriter // the agent's input
	served chan error
	ctx    context.Context
	// wire holds every byte the agent wrote, in order.
	wire lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// setup is what a test serves: the connection's options and the backend
// its Backend builds at once, unless the test sets opts.Backend.
type setup struct {
	opts Options
	b    Backend
}

// backendOf is the world's backend.
func backendOf(w *world) Backend {
	return Backend{Sessions: w, Catalog: w.query, Tools: w.tools, Permissions: w.perms, Models: w.provider.Models(), NewID: w.newID}
}

func start(t *testing.T, w *world, tweak ...func(*setup)) *harness {
	t.Helper()
	c := newClient()
	return startAs(t, w, c, c, tweak...)
}

// startAs serves the world to peer, a client built on c (the recording
// client the harness reads updates from).
func startAs(t *testing.T, w *world, peer sdk.Client, c *client, tweak ...func(*setup)) *harness {
	t.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	su := setup{opts: Options{Version: "1.2.3"}, b: backendOf(w)}
	for _, fn := range tweak {
		fn(&su)
	}
	opts := su.opts
	if opts.Backend == nil {
		opts.Backend = Ready(su.b)
	}
	h := &harness{t: t, w: w, c: c, in: clientOut, served: make(chan error, 1), ctx: context.Background()}
	go func() {
		h.served <- Serve(context.Background(), agentIn, agentOut, opts)
		_ = agentOut.Close()
	}()
	h.conn = sdk.NewClientSideConnection(peer, clientOut, io.TeeReader(clientIn, &h.wire))
	t.Cleanup(func() { h.stop() })
	return h
}

// stop closes the agent's input and returns what Serve returned.
func (h *harness) stop() error {
	_ = h.in.Close()
	select {
	case err, ok := <-h.served:
		if ok {
			close(h.served)
			return err
		}
		return nil
	case <-time.After(30 * time.Second):
		h.t.Fatal("Serve did not return after its input closed")
		return nil
	}
}

func (h *harness) newSession(cwd string) sdk.SessionId {
	h.t.Helper()
	resp, err := h.conn.NewSession(h.ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		h.t.Fatalf("session/new: %v", err)
	}
	// The commands follow the answer; wait for them so that a test's
	// updates start with the session's own.
	h.c.commandsOf(h.t, resp.SessionId)
	return resp.SessionId
}

func (h *harness) prompt(id sdk.SessionId, text string) (sdk.PromptResponse, error) {
	return h.conn.Prompt(h.ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

// workspace returns a fresh directory to use as a session cwd.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kinds renders updates compactly ("agent_message_chunk:Hi", "tool_call:call_1:in_progress", ...).
func kinds(ns []sdk.SessionNotification) []string {
	var out []string
	for _, n := range ns {
		u := n.Update
		switch {
		case u.UserMessageChunk != nil:
			out = append(out, "user_message_chunk:"+u.UserMessageChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil:
			out = append(out, "agent_message_chunk:"+u.AgentMessageChunk.Content.Text.Text)
		case u.AgentThoughtChunk != nil:
			out = append(out, "agent_thought_chunk:"+u.AgentThoughtChunk.Content.Text.Text)
		case u.ToolCall != nil:
			out = append(out, fmt.Sprintf("tool_call:%s:%s", u.ToolCall.ToolCallId, u.ToolCall.Status))
		case u.ToolCallUpdate != nil:
			out = append(out, fmt.Sprintf("tool_call_update:%s:%s", u.ToolCallUpdate.ToolCallId, *u.ToolCallUpdate.Status))
		case u.Plan != nil:
			out = append(out, fmt.Sprintf("plan:%d", len(u.Plan.Entries)))
		case u.SessionInfoUpdate != nil:
			out = append(out, "session_info_update:"+*u.SessionInfoUpdate.Title)
		case u.CurrentModeUpdate != nil:
			out = append(out, "current_mode_update:"+string(u.CurrentModeUpdate.CurrentModeId))
		case u.ConfigOptionUpdate != nil:
			out = append(out, "config_option_update")
		case u.AvailableCommandsUpdate != nil:
			out = append(out, fmt.Sprintf("available_commands_update:%d", len(u.AvailableCommandsUpdate.AvailableCommands)))
		case u.UsageUpdate != nil:
			out = append(out, fmt.Sprintf("usage_update:%d/%d", u.UsageUpdate.Used, u.UsageUpdate.Size))
		default:
			out = append(out, "other")
		}
	}
	return out
}

// statusesOf is the status sequence a tool call went through.
func statusesOf(ns []sdk.SessionNotification, id string) []string {
	var out []string
	for _, n := range ns {
		switch u := n.Update; {
		case u.ToolCall != nil && string(u.ToolCall.ToolCallId) == id:
			out = append(out, string(u.ToolCall.Status))
		case u.ToolCallUpdate != nil && string(u.ToolCallUpdate.ToolCallId) == id && u.ToolCallUpdate.Status != nil:
			out = append(out, string(*u.ToolCallUpdate.Status))
		}
	}
	return out
}

// rawConn drives Serve with raw lines, for input the SDK client never
// sends.
type rawConn struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	served chan error
}

func startRaw(t *testing.T, w *world) *rawConn {
	t.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	r := &rawConn{t: t, in: clientOut, lines: make(chan string, 64), served: make(chan error, 1)}
	opts := Options{Backend: Ready(Backend{Sessions: w, Catalog: w.query, Tools: w.tools, Permissions: w.perms}), Version: "1.2.3"}
	go func() {
		r.served <- Serve(context.Background(), agentIn, agentOut, opts)
		_ = agentOut.Close()
	}()
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(clientIn)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for sc.Scan() {
			// Every session/new is followed by its commands; the raw
			// tests read answers.
			if strings.Contains(sc.Text(), `"sessionUpdate":"available_commands_update"`) {
				continue
			}
			r.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = r.in.Close()
		<-r.served
	})
	return r
}

func (r *rawConn) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// next returns the next frame the agent wrote, decoded.
func (r *rawConn) next() map[string]any {
	r.t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			r.t.Fatal("the agent closed its output")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			r.t.Fatalf("frame is not JSON: %q", l)
		}
		return m
	case <-time.After(2 * time.Minute):
		// Generous: a 10 MiB frame under -race on a loaded machine takes
		// tens of seconds to parse.
		r.t.Fatal("no frame from the agent")
		return nil
	}
}

func errorOf(t *testing.T, frame map[string]any) (float64, string) {
	t.Helper()
	e, ok := frame["error"].(map[string]any)
	if !ok {
		t.Fatalf("frame is not an error: %v", frame)
	}
	return e["code"].(float64), e["message"].(string)
}

func textDelta(s string) llm.Chunk {
	return llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Delta: s}
}

func reasoningDelta(s string) llm.Chunk {
	return llm.Chunk{Type: llm.ChunkReasoningDelta, Index: 0, Delta: s}
}

func toolDelta(index int, id, name, args string) llm.Chunk {
	return llm.Chunk{Type: llm.ChunkToolCallDelta, Index: 2 + index, ID: id, Name: name, ArgumentsDelta: args}
}

func finish(kind string) llm.Chunk { return llm.Chunk{Type: llm.ChunkFinish, Kind: kind} }
