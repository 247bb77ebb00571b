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

// screenDriver runs a UI on a simulation screen and reads what it drew.
type screenDriver struct {
	t      *testing.T
	screen tcell.SimulationScreen
	frames chan string
	last   string
	ui     *ui
	done   chan runOutcome
	cancel context.CancelFunc
}

type runOutcome struct {
	res Result
	err error
}

// sizedScreen is a simulation screen that keeps its size across Init,
// which tview calls when it takes the screen.
type sizedScreen struct {
	tcell.SimulationScreen
	w, h int
}

func (s *sizedScreen) Init() error {
	if err := s.SimulationScreen.Init(); err != nil {
		return err
	}
	s.SetSize(s.w, s.h)
	return nil
}

// startUI runs the UI over b with opts adjusted for tests, and waits for
// its first frame.
func startUI(t *testing.T, b *backend, adjust func(*Options)) *screenDriver {
	t.Helper()
	d := &screenDriver{t: t, frames: make(chan string, 1), done: make(chan runOutcome, 1)}
	d.screen = tcell.NewSimulationScreen("UTF-8")
	opts := Options{
		Sessions: b, Query: b.query, Tools: b.tools, Permissions: b.perms, Models: b.provider.(Models),
		Config: Config{ShowReasoning: true, MaxToolOutputLines: 6, Color: true, Mouse: true},
		Cwd:    b.cwd, Version: "test",
		Screen: &sizedScreen{SimulationScreen: d.screen, w: 100, h: 30},
		Now:    b.clock.now,
		NewID:  b.newID,
	}
	opts.AfterDraw = func(s tcell.Screen) {
		text := screenText(s)
		select {
		case <-d.frames:
		default:
		}
		d.frames <- text
	}
	if adjust != nil {
		adjust(&opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	ready := make(chan *ui, 1)
	go func() {
		res, err := runUI(ctx, opts, func(u *ui) { ready <- u })
		d.done <- runOutcome{res, err}
	}()
	select {
	case d.ui = <-ready:
	case out := <-d.done:
		t.Fatalf("the UI did not start: %v", out.err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-d.done:
		case <-time.After(20 * time.Second):
			t.Error("the UI did not stop after its context was cancelled")
		}
	})
	d.waitFor("the first frame", func(string) bool { return true })
	return d
}

// screenText reads the logical screen contents row by row.
func screenText(s tcell.Screen) string {
	w, h := s.Size()
	var b strings.Builder
	for y := 0; y < h; y++ {
		var row strings.Builder
		for x := 0; x < w; x++ {
			str, _, width := s.Get(x, y)
			if str == "" {
				str = " "
			}
			row.WriteString(str)
			if width > 1 {
				x += width - 1
			}
		}
		b.WriteString(strings.TrimRight(row.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// waitLimit bounds every wait for a frame; it only decides when a broken
// test gives up, never what a passing one sees.
const waitLimit = 15 * time.Second

// waitFor waits for a frame satisfying ok and returns it.
func (d *screenDriver) waitFor(what string, ok func(screen string) bool) string {
	d.t.Helper()
	if d.last != "" && ok(d.last) {
		return d.last
	}
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		select {
		case f := <-d.frames:
			d.last = f
			if ok(f) {
				return f
			}
		case out := <-d.done:
			d.t.Fatalf("waiting for %s: the UI exited (%v); last screen:\n%s", what, out.err, d.last)
		case <-deadline.C:
			d.t.Fatalf("waiting for %s: not shown; last screen:\n%s", what, d.last)
		}
	}
}

// waitText waits until every text is on screen.
func (d *screenDriver) waitText(texts ...string) string {
	d.t.Helper()
	return d.waitFor(strings.Join(texts, " + "), func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	})
}

// waitGone waits until text is no longer on screen.
func (d *screenDriver) waitGone(text string) string {
	d.t.Helper()
	return d.waitFor("no "+text, func(s string) bool { return !strings.Contains(s, text) })
}

func (d *screenDriver) key(k tcell.Key) { d.screen.InjectKey(k, 0, tcell.ModNone) }

func (d *screenDriver) keyMod(k tcell.Key, r rune, m tcell.ModMask) { d.screen.InjectKey(k, r, m) }

func (d *screenDriver) typeText(s string) {
	for _, r := range s {
		d.screen.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
}

// submit types a line and presses Enter.
func (d *screenDriver) submit(s string) {
	d.typeText(s)
	d.key(tcell.KeyEnter)
}

// exit presses Ctrl+C twice and waits for Run to return.
func (d *screenDriver) exit() runOutcome {
	d.t.Helper()
	d.keyMod(tcell.KeyCtrlC, 0, tcell.ModCtrl)
	d.keyMod(tcell.KeyCtrlC, 0, tcell.ModCtrl)
	select {
	case out := <-d.done:
		d.done <- out
		return out
	case <-time.After(waitLimit):
		d.t.Fatalf("Ctrl+C twice did not exit; last screen:\n%s", d.last)
		return runOutcome{}
	}
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
