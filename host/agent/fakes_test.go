package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// script serves one model call.
type script func(ctx context.Context, req llm.Request, yield func(llm.Chunk) error) error

// fakeProvider serves scripted model calls in order and records requests.
type fakeProvider struct {
	t      *testing.T
	mu     sync.Mutex
	calls  []script
	reqs   []llm.Request
	models map[string]llm.ModelInfo
	// check, when set, inspects every request as it is sent.
	check func(llm.Request)
}

func newFakeProvider(t *testing.T, calls ...script) *fakeProvider {
	return &fakeProvider{t: t, calls: calls, models: map[string]llm.ModelInfo{}}
}

func (p *fakeProvider) Name() string            { return "fake" }
func (p *fakeProvider) Models() []llm.ModelInfo { return nil }

func (p *fakeProvider) Model(id string) llm.ModelInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.models[id]; ok {
		return m
	}
	return llm.ModelInfo{ID: id}
}

func (p *fakeProvider) setModel(info llm.ModelInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.models[info.ID] = info
}

func (p *fakeProvider) add(calls ...script) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, calls...)
}

func (p *fakeProvider) Stream(ctx context.Context, req llm.Request, yield func(llm.Chunk) error) error {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	if len(p.calls) == 0 {
		p.mu.Unlock()
		p.t.Errorf("unexpected model call %d (purpose %q)", len(p.reqs), req.Purpose)
		return llm.Failf(llm.CodeReplay, "script exhausted")
	}
	s := p.calls[0]
	p.calls = p.calls[1:]
	check := p.check
	p.mu.Unlock()
	if check != nil {
		check(req)
	}
	return s(ctx, req, yield)
}

func (p *fakeProvider) requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}

func (p *fakeProvider) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

// chunks yields the given chunks in order.
func chunks(cs ...llm.Chunk) script {
	return func(ctx context.Context, _ llm.Request, yield func(llm.Chunk) error) error {
		for _, c := range cs {
			if err := yield(c); err != nil {
				return err
			}
		}
		return nil
	}
}

func textChunks(index int, text string) []llm.Chunk {
	b := session.TextBlock(text)
	return []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: index, BlockType: session.BlockText},
		{Type: llm.ChunkTextDelta, Index: index, Delta: text},
		{Type: llm.ChunkBlockEnd, Index: index, Block: &b},
	}
}

func callChunks(index int, id, name, args string) []llm.Chunk {
	b := session.ToolCallBlock(id, name, args)
	return []llm.Chunk{
		{Type: llm.ChunkToolCallDelta, Index: index, ID: id, Name: name, ArgumentsDelta: args},
		{Type: llm.ChunkBlockEnd, Index: index, Block: &b},
	}
}

func usage(in, out int) llm.Chunk {
	return llm.Chunk{Type: llm.ChunkUsage, Usage: &session.Usage{InputTokens: in, OutputTokens: out}}
}

func finish(kind string) llm.Chunk { return llm.Chunk{Type: llm.ChunkFinish, Kind: kind} }

// held signals started, then waits for release (or cancellation) before
// running s.
func held(started chan<- struct{}, release <-chan struct{}, s script) script {
	return func(ctx context.Context, req llm.Request, yield func(llm.Chunk) error) error {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return s(ctx, req, yield)
	}
}

// textReply is a complete text answer.
func textReply(text string) script {
	cs := append(textChunks(0, text), usage(10, 2), finish(llm.FinishStop))
	return chunks(cs...)
}

// toolReply asks for the given tool calls ("name:args" pairs keyed by id).
func toolReply(calls ...[3]string) script {
	var cs []llm.Chunk
	for i, c := range calls {
		cs = append(cs, callChunks(i, c[0], c[1], c[2])...)
	}
	cs = append(cs, usage(10, 5), finish(llm.FinishToolCalls))
	return chunks(cs...)
}

func call(id, name, args string) [3]string { return [3]string{id, name, args} }

// sinkOp is one operation seen by recordingSink: an appended event type or
// "flush".
type recordingSink struct {
	mu        sync.Mutex
	ops       []string
	flushErr  error
	appendErr func(session.Event) error
}

func (s *recordingSink) Append(events ...session.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range events {
		if s.appendErr != nil {
			if err := s.appendErr(e); err != nil {
				return err
			}
		}
		s.ops = append(s.ops, e.Type)
	}
	return nil
}

func (s *recordingSink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, "flush")
	return s.flushErr
}

func (s *recordingSink) Close() error { return nil }

func (s *recordingSink) setFlushErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushErr = err
}

func (s *recordingSink) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ops)
}

// toolTrace records tool body starts and ends in order.
type toolTrace struct {
	mu  sync.Mutex
	ops []string
}

func (tr *toolTrace) add(op string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.ops = append(tr.ops, op)
}

func (tr *toolTrace) list() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.ops)
}

// gates lets a test hold a tool body until it is released; a body with no
// gate runs straight through. started reports each body as it begins.
type gates struct {
	mu      sync.Mutex
	holds   map[string]chan struct{}
	started chan string
}

func newGates() *gates {
	return &gates{holds: map[string]chan struct{}{}, started: make(chan string, 64)}
}

func (g *gates) hold(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holds[key] = make(chan struct{})
}

func (g *gates) release(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.holds[key])
}

// wait blocks a body keyed key until release or ctx ends.
func (g *gates) wait(ctx context.Context, key string) error {
	g.started <- key
	g.mu.Lock()
	ch := g.holds[key]
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// expectStarted waits for the bodies keyed keys to start, in any order.
func (g *gates) expectStarted(t *testing.T, keys ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	deadline := time.After(10 * time.Second)
	for len(want) > 0 {
		select {
		case k := <-g.started:
			if !want[k] {
				t.Fatalf("tool %q started; waiting for %v", k, keys)
			}
			delete(want, k)
		case <-deadline:
			t.Fatalf("tools %v did not start", keys)
		}
	}
}

// fileTools registers read (parallel-safe, read-only) and write (exclusive,
// side-effecting) tools over a fake file map; bodies pass through gates keyed
// "<tool> <path>".
func fileTools(t *testing.T, g *gates, tr *toolTrace) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry(nil)
	body := func(name string) func(ctx context.Context, c *tools.Call) (any, error) {
		return func(ctx context.Context, c *tools.Call) (any, error) {
			var args struct {
				Path string `json:"path"`
			}
			if err := c.Decode(&args); err != nil {
				return nil, err
			}
			key := name + " " + args.Path
			tr.add("start " + key)
			defer tr.add("end " + key)
			if err := g.wait(ctx, key); err != nil {
				// Report success anyway: the pipeline must turn a result
				// superseded by cancellation into ABORTED.
				return "interrupted " + key, nil
			}
			return "done " + key, nil
		}
	}
	params := tools.Object(tools.Req("path", tools.String("file path")))
	for _, d := range []*tools.Definition{
		{
			Name: "read", Description: "read a file", Parameters: params, Output: tools.StringOutput,
			Effect: tools.EffectRead, Execute: body("read"),
			ConcurrencySafe: func(*tools.Call) bool { return true },
		},
		{
			Name: "write", Description: "write a file", Parameters: params, Output: tools.StringOutput,
			Effect: tools.EffectWrite, Execute: body("write"),
		},
	} {
		if _, err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// harness is one agent over an in-memory session with a recording sink and
// deterministic clock, ids and sleeps.
type harness struct {
	t        *testing.T
	agent    *Agent
	live     *session.Live
	sink     *recordingSink
	provider *fakeProvider
	prompts  *prompt.Registry
	cwd      string

	mu     sync.Mutex
	sleeps []time.Duration
	ids    int
}

type harnessOption func(*harness, *Options)

func withTools(reg *tools.Registry) harnessOption {
	return func(_ *harness, o *Options) { o.Tools = reg }
}

func withOptions(fn func(*Options)) harnessOption {
	return func(_ *harness, o *Options) { fn(o) }
}

var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func newHarness(t *testing.T, p *fakeProvider, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{t: t, provider: p, sink: &recordingSink{}, prompts: prompt.NewRegistry(), cwd: t.TempDir()}
	hdr := session.Header{ID: "sess-1", CreatedAt: epoch.UnixMilli(), Cwd: session.Ptr(h.cwd)}
	h.live = session.NewLive(hdr, nil, session.LiveOptions{Sink: h.sink, Now: func() time.Time { return epoch }})
	o := Options{
		Live:     h.live,
		Provider: p,
		Prompt:   h.prompts,
		Model:    "m1",
		Now:      func() time.Time { return epoch },
		NewID:    h.newID,
		Sleep:    h.sleep,
		Rand:     func() float64 { return 0.5 },
	}
	for _, fn := range opts {
		fn(h, &o)
	}
	p.check = h.reconstructable
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	h.agent = a
	t.Cleanup(func() { _ = a.Close() })
	return h
}

// reconstructable asserts the invariant of host.md §2.4: a turn request is
// exactly the latest logged header plus the history derived from the log
// at the time it is sent.
func (h *harness) reconstructable(req llm.Request) {
	if req.Purpose != llm.PurposeTurn {
		return
	}
	events := h.live.Events(0)
	want, err := session.DeriveMessages(events)
	if err != nil {
		h.t.Errorf("derive messages: %v", err)
		return
	}
	if !sameMessages(req.Messages, want) {
		h.t.Errorf("request messages differ from the derived history\n got %d messages\nwant %d", len(req.Messages), len(want))
	}
	headers := ofType(events, session.TypeRequestHeader)
	if len(headers) == 0 {
		h.t.Error("request sent without a logged header")
		return
	}
	var hdr session.RequestHeader
	if err := headers[len(headers)-1].DecodeData(&hdr); err != nil {
		h.t.Error(err)
		return
	}
	c, r := hdr.Header.Config, req.Config
	if c.Provider != r.Provider || c.Model != r.Model || c.ReasoningEffort != r.ReasoningEffort ||
		(c.MaxTokens == nil) != (r.MaxTokens == nil) || (c.MaxTokens != nil && *c.MaxTokens != *r.MaxTokens) ||
		hdr.Header.System != req.System || len(hdr.Header.Tools) != len(req.Tools) {
		h.t.Errorf("request %+v does not match the logged header %+v", r, hdr.Header)
	}
}

func (h *harness) newID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids++
	return fmt.Sprintf("id-%d", h.ids)
}

func (h *harness) sleep(ctx context.Context, d time.Duration) error {
	h.mu.Lock()
	h.sleeps = append(h.sleeps, d)
	h.mu.Unlock()
	return ctx.Err()
}

// prompt sends a prompt and waits for the agent to become idle.
func (h *harness) prompt(text string) {
	h.t.Helper()
	h.agent.Followup(UserText(text, h.newID()))
	h.idle()
}

func (h *harness) idle() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.agent.WhenIdle(ctx); err != nil {
		h.t.Fatalf("agent did not become idle: %v", err)
	}
}

func (h *harness) events() []session.Event { return h.live.Events(0) }

// checkLog asserts the log is a valid, continuable session.
func (h *harness) checkLog() {
	h.t.Helper()
	hdr, events := h.live.Snapshot()
	if err := session.ValidateLog(hdr, events); err != nil {
		h.t.Fatalf("invalid log: %v\n%s", err, dump(events))
	}
}

// compact renders a type list with runs of assistant/chunk collapsed, so an
// expected sequence reads like host.md §2.7.
func compactTypes(events []session.Event) []string {
	var out []string
	for _, e := range events {
		if e.Type == session.TypeAssistantChunk && len(out) > 0 && out[len(out)-1] == "assistant/chunk*" {
			continue
		}
		if e.Type == session.TypeAssistantChunk {
			out = append(out, "assistant/chunk*")
			continue
		}
		out = append(out, e.Type)
	}
	return out
}

func dump(events []session.Event) string {
	var b strings.Builder
	for _, e := range events {
		line, _ := e.MarshalLine()
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func expectTypes(t *testing.T, events []session.Event, want ...string) {
	t.Helper()
	if got := compactTypes(events); !slices.Equal(got, want) {
		t.Fatalf("event types\n got: %q\nwant: %q\nlog:\n%s", got, want, dump(events))
	}
}

// ofType returns the events of type typ.
func ofType(events []session.Event, typ string) []session.Event {
	var out []session.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func decode[T any](t *testing.T, e session.Event) T {
	t.Helper()
	var v T
	if err := e.DecodeData(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func sources(t *testing.T, e session.Event) []int {
	t.Helper()
	s, err := e.Sources()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func lastTurnEnd(t *testing.T, events []session.Event) session.TurnEndReason {
	t.Helper()
	ends := ofType(events, session.TypeTurnEnd)
	if len(ends) == 0 {
		t.Fatalf("no turn/end\n%s", dump(events))
	}
	return decode[session.TurnEnd](t, ends[len(ends)-1]).Reason
}

var errInjected = errors.New("injected failure")
