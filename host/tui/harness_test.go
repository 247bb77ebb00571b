package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	"github.com/seed-e9b4dba4/dsh/host/tui/tuitest"
)

// testNow is the fixed clock of every UI test.
var testNow = time.UnixMilli(1_750_000_000_000).UTC()

// backend is a small runtime for UI tests: sessions persisted in a real
// store under t.TempDir(), the real coding tools and permissions, the real
// session-query service, and a scripted model.
type backend struct {
	t        *testing.T
	store    *store.Store
	registry *session.Registry
	tools    *tools.Registry
	perms    *permissions.Service
	query    *sessionquery.Service
	provider llm.Provider
	cwd      string

	mu     sync.Mutex
	agents map[string]*agent.Agent
	ids    int
	// closed receives the id of every session CloseSession closed.
	closed chan string
	// clock is everyone's clock: the store's, the logs', the agents' and
	// the UI's. It stands at testNow until a test advances it.
	clock testClock
}

// testClock is a clock that moves only when a test says so.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time { return testNow.Add(time.Duration(c.offset.Load())) }

func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

func newBackend(t *testing.T, provider llm.Provider) *backend {
	t.Helper()
	return newBackendWith(t, provider, codingtools.Options{}, permissions.ModeDefault)
}

// newBackendWith is newBackend with the coding tools' options and the
// permission mode sessions start in.
func newBackendWith(t *testing.T, provider llm.Provider, opts codingtools.Options, mode permissions.Mode) *backend {
	t.Helper()
	root := t.TempDir()
	cwd := filepath.Join(root, "work")
	b := &backend{
		t:        t,
		store:    store.New(filepath.Join(root, "sessions"), store.Options{Now: func() time.Time { return testNow }}),
		registry: session.NewRegistry(),
		tools:    tools.NewRegistry(nil),
		provider: provider,
		cwd:      cwd,
		agents:   map[string]*agent.Agent{},
		closed:   make(chan string, 64),
	}
	mkdir(t, cwd)
	set, err := codingtools.New(codingtools.DefaultConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range set.Definitions() {
		if _, err := b.tools.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	b.perms = permissions.New(b.tools, mode)
	t.Cleanup(b.perms.Install())
	if b.query, err = sessionquery.New(sessionquery.DefaultConfig(), b.registry); err != nil {
		t.Fatal(err)
	}
	b.query.Mount(sessionquery.NewStorePersistence(b.store))
	b.query.SetEngine(scanEngine{b.query})
	t.Cleanup(func() { _ = b.query.Close() })
	return b
}

func (b *backend) newID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ids++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", b.ids)
}

func (b *backend) NewSession(ctx context.Context, cwd string) (*agent.Agent, error) {
	h := session.Header{ID: b.newID(), CreatedAt: testNow.UnixMilli(), Cwd: session.Ptr(cwd), DelegationDepth: session.Ptr(0)}
	w, err := b.store.Create(h, nil)
	if err != nil {
		return nil, err
	}
	return b.start(h, nil, w, false)
}

func (b *backend) ResumeSession(ctx context.Context, id string) (*agent.Agent, error) {
	b.mu.Lock()
	a, ok := b.agents[id]
	b.mu.Unlock()
	if ok {
		return a, nil
	}
	w, h, events, err := b.store.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return b.start(h, events, w, true)
}

func (b *backend) ForkSession(ctx context.Context, id string, boundary int) (*agent.Agent, error) {
	b.mu.Lock()
	a, ok := b.agents[id]
	b.mu.Unlock()
	var (
		src    session.Header
		events []session.Event
		err    error
	)
	if ok {
		src, events = a.Session().Snapshot()
	} else if src, events, err = b.store.Inspect(ctx, id); err != nil {
		return nil, err
	}
	h, seed, err := session.Fork(src, events, boundary, b.newID(), testNow.UnixMilli())
	if err != nil {
		return nil, err
	}
	w, err := b.store.Create(h, seed)
	if err != nil {
		return nil, err
	}
	return b.start(h, seed, w, true)
}

func (b *backend) start(h session.Header, events []session.Event, w *store.Writer, seeded bool) (*agent.Agent, error) {
	live := session.NewLive(h, events, session.LiveOptions{Sink: w, Now: b.clock.now})
	if seeded {
		if _, err := session.MarkEndSeed(live); err != nil {
			return nil, err
		}
	}
	if err := b.registry.Attach(live); err != nil {
		return nil, errors.Join(err, live.Close())
	}
	a, err := agent.New(agent.Options{
		Live: live, Provider: b.provider, Tools: b.tools, Model: "test-model", Resumed: seeded,
		Now: b.clock.now, NewID: b.newID,
		Sleep: func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		b.registry.Detach(live)
		return nil, errors.Join(err, live.Close())
	}
	b.mu.Lock()
	b.agents[h.ID] = a
	b.mu.Unlock()
	return a, nil
}

func (b *backend) CloseSession(a *agent.Agent) error {
	b.mu.Lock()
	if b.agents[a.ID()] != a {
		b.mu.Unlock()
		return nil
	}
	delete(b.agents, a.ID())
	b.mu.Unlock()
	err := a.Close()
	b.registry.Detach(a.Session())
	b.perms.Forget(a.ID())
	err = errors.Join(err, a.Session().Close())
	b.closed <- a.ID()
	return err
}

// scanEngine is a search engine for tests: the service's literal text scan,
// one session at a time. The real FTS provider is tested in its own package
// and through the composition.
type scanEngine struct{ svc *sessionquery.Service }

func (e scanEngine) SearchSessions(ctx context.Context, req sessionquery.SessionSearchRequest) (sessionquery.SessionSearchPage, error) {
	recs, err := e.svc.FilterSessions(ctx, req.SessionFilters)
	if err != nil {
		return sessionquery.SessionSearchPage{}, err
	}
	page := sessionquery.SessionSearchPage{Items: []sessionquery.SessionHit{}}
	for _, r := range recs {
		docs, err := e.svc.FilterEvents(ctx, r.Header.ID, []sessionquery.EventFilter{{Kind: sessionquery.KindText, Text: req.Query}})
		if err != nil || len(docs) == 0 {
			continue
		}
		page.Items = append(page.Items, sessionquery.SessionHit{SessionRecord: r, BestMatch: sessionquery.EventHit{EventRecord: docs[0].EventRecord, Snippet: docs[0].Text}})
	}
	return page, nil
}

func (e scanEngine) SearchEvents(ctx context.Context, req sessionquery.EventSearchRequest) (sessionquery.EventSearchPage, error) {
	docs, err := e.svc.FilterEvents(ctx, req.SessionID, []sessionquery.EventFilter{{Kind: sessionquery.KindText, Text: req.Query}})
	if err != nil {
		return sessionquery.EventSearchPage{}, err
	}
	page := sessionquery.EventSearchPage{Items: []sessionquery.EventHit{}}
	for _, d := range docs {
		if req.Limit != nil && len(page.Items) >= *req.Limit {
			break
		}
		page.Items = append(page.Items, sessionquery.EventHit{EventRecord: d.EventRecord, Snippet: d.Text})
	}
	return page, nil
}

func (scanEngine) Close() error { return nil }

// scripted is one model call of a scriptedProvider. With hold set, the
// stream stays open after its chunks until the call is cancelled.
type scripted struct {
	chunks []llm.Chunk
	hold   bool
	// release, when set, pauses the stream after chunks until it is
	// closed; tail is streamed then.
	release chan struct{}
	tail    []llm.Chunk
}

// scriptedProvider serves scripted model calls in order, across sessions.
type scriptedProvider struct {
	mu      sync.Mutex
	replies []scripted
	calls   int
	// holding receives the call number when a held stream is open.
	holding chan int
}

func newScripted(replies ...scripted) *scriptedProvider {
	return &scriptedProvider{replies: replies, holding: make(chan int, 16)}
}

func (p *scriptedProvider) Name() string { return "scripted" }

func (p *scriptedProvider) Models() []llm.ModelInfo {
	return []llm.ModelInfo{
		{ID: "test-model", ContextWindow: 100_000, Efforts: []string{"low", "high"}},
		{ID: "big-model", ContextWindow: 1_000_000},
	}
}

func (p *scriptedProvider) Model(id string) llm.ModelInfo {
	for _, m := range p.Models() {
		if m.ID == id {
			return m
		}
	}
	return llm.ModelInfo{ID: id}
}

func (p *scriptedProvider) Stream(ctx context.Context, req llm.Request, yield func(llm.Chunk) error) error {
	p.mu.Lock()
	n := p.calls
	p.calls++
	var r *scripted
	if n < len(p.replies) {
		r = &p.replies[n]
	}
	p.mu.Unlock()
	if r == nil {
		return llm.Failf(llm.CodeReplay, "the test script has no reply %d", n+1)
	}
	for _, c := range r.chunks {
		if err := yield(c); err != nil {
			return err
		}
	}
	if r.hold {
		p.holding <- n
		<-ctx.Done()
		return context.Cause(ctx)
	}
	if r.release != nil {
		p.holding <- n
		select {
		case <-r.release:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		for _, c := range r.tail {
			if err := yield(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// textReply streams reasoning and text in small deltas.
func textReply(reasoning, text string) scripted {
	var cs []llm.Chunk
	idx := 0
	if reasoning != "" {
		cs = append(cs, llm.Chunk{Type: llm.ChunkBlockStart, Index: idx, BlockType: session.BlockReasoning},
			llm.Chunk{Type: llm.ChunkReasoningDelta, Index: idx, Delta: reasoning})
		idx++
	}
	cs = append(cs, llm.Chunk{Type: llm.ChunkBlockStart, Index: idx, BlockType: session.BlockText})
	for _, part := range strings.SplitAfter(text, " ") {
		cs = append(cs, llm.Chunk{Type: llm.ChunkTextDelta, Index: idx, Delta: part})
	}
	cs = append(cs,
		llm.Chunk{Type: llm.ChunkUsage, Usage: &session.Usage{InputTokens: 1200, OutputTokens: 34, CacheReadTokens: 800}},
		llm.Chunk{Type: llm.ChunkFinish, Kind: llm.FinishStop})
	return scripted{chunks: cs}
}

// toolReply asks for one tool call.
func toolReply(id, name, args string) scripted {
	return scripted{chunks: []llm.Chunk{
		{Type: llm.ChunkToolCallDelta, Index: 0, ID: id, Name: name, ArgumentsDelta: args},
		{Type: llm.ChunkUsage, Usage: &session.Usage{InputTokens: 1000, OutputTokens: 20}},
		{Type: llm.ChunkFinish, Kind: llm.FinishToolCalls},
	}}
}

// heldReply streams some text and then never finishes on its own.
func heldReply(text string) scripted {
	return scripted{chunks: []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: 0, BlockType: session.BlockText},
		{Type: llm.ChunkTextDelta, Index: 0, Delta: text},
	}, hold: true}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// screenDriver runs a UI on a simulation screen and reads what it drew
// (tuitest.Driver); the lower-case methods are the tests' short names.
type screenDriver struct {
	*tuitest.Driver[Result]
	t      *testing.T
	screen tcell.SimulationScreen
	ui     *ui
}

type runOutcome = tuitest.Outcome[Result]

// sizedScreen is the screen startUI hands the UI; adjust may resize it
// before the UI starts.
type sizedScreen = tuitest.Screen

// startUI runs the UI over b with opts adjusted for tests, and waits for
// its first frame.
func startUI(t *testing.T, b *backend, adjust func(*Options)) *screenDriver {
	t.Helper()
	d := &screenDriver{Driver: tuitest.New[Result](t, 100, 30), t: t}
	d.screen = d.Screen.SimulationScreen
	opts := Options{
		Sessions: b, Query: b.query, Tools: b.tools, Permissions: b.perms, Models: b.provider.(Models),
		Config: Config{ShowReasoning: true, MaxToolOutputLines: 6, Color: true, Mouse: true},
		Cwd:    b.cwd, Version: "test",
		Screen:    d.Screen,
		Now:       b.clock.now,
		NewID:     b.newID,
		AfterDraw: d.AfterDraw,
	}
	if adjust != nil {
		adjust(&opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *ui, 1)
	d.Start(func() (Result, error) { return runUI(ctx, opts, func(u *ui) { ready <- u }) })
	select {
	case d.ui = <-ready:
	case out := <-d.Done():
		t.Fatalf("the UI did not start: %v", out.Err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-d.Done():
		case <-time.After(20 * time.Second):
			t.Error("the UI did not stop after its context was cancelled")
		}
	})
	d.waitFor("the first frame", func(string) bool { return true })
	return d
}

// screenText reads the logical screen contents row by row.
func screenText(s tcell.Screen) string { return tuitest.Text(s) }

// waitLimit bounds every wait for a frame (tuitest.DefaultLimit).
const waitLimit = tuitest.DefaultLimit

func (d *screenDriver) waitFor(what string, ok func(screen string) bool) string {
	d.t.Helper()
	return d.WaitFor(what, ok)
}

func (d *screenDriver) waitText(texts ...string) string {
	d.t.Helper()
	return d.WaitText(texts...)
}

func (d *screenDriver) waitGone(text string) string {
	d.t.Helper()
	return d.WaitGone(text)
}

func (d *screenDriver) key(k tcell.Key)                             { d.Key(k) }
func (d *screenDriver) keyMod(k tcell.Key, r rune, m tcell.ModMask) { d.KeyMod(k, r, m) }
func (d *screenDriver) typeText(s string)                           { d.Type(s) }
func (d *screenDriver) submit(s string)                             { d.Submit(s) }

func (d *screenDriver) exit() runOutcome {
	d.t.Helper()
	return d.Exit()
}

// row returns screen row y of a frame.
func row(screen string, y int) string {
	rows := strings.Split(screen, "\n")
	if y < 0 {
		y += len(rows) - 1
	}
	if y < 0 || y >= len(rows) {
		return ""
	}
	return rows[y]
}

func userText(s string) session.Message {
	return agent.UserText(s, "prompt-"+s)
}
