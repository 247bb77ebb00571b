package replay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Config configures a replay Provider.
type Config struct {
	// Name is the provider route recorded in request headers (default
	// "deepseek").
	Name string
	// Fixtures are session logs or scenario directories, primary first.
	Fixtures []string
	// Override is an optional JSON file replacing or patching the primary
	// script.
	Override string
	// Models is the catalog (default deepseek-v4-flash and deepseek-v4-pro).
	// Entries carry no context window or defaults, so replayed headers have
	// no adapterDefaults.
	Models []llm.ModelInfo
}

// Provider replays recorded model calls.
type Provider struct {
	name    string
	models  []llm.ModelInfo
	scripts []*script

	mu    sync.Mutex
	next  int                 // index of the next unbound script
	bound map[string]*binding // by live session id
}

type binding struct {
	script   *script
	cursor   int
	inFlight bool
}

var _ llm.Provider = (*Provider)(nil)

// New loads and derives every script. A missing fixture, an unreadable or
// malformed log, an invalid override, or a recorded call that cannot be
// replayed (and is not overridden) is an error naming the file.
func New(cfg Config) (*Provider, error) {
	if cfg.Name == "" {
		cfg.Name = "deepseek"
	}
	if cfg.Models == nil {
		cfg.Models = []llm.ModelInfo{{ID: "deepseek-v4-flash", Name: "deepseek-v4-flash"}, {ID: "deepseek-v4-pro", Name: "deepseek-v4-pro"}}
	}
	files, err := expandFixtures(cfg.Fixtures)
	if err != nil {
		return nil, err
	}
	var ov *override
	if cfg.Override != "" {
		if ov, err = readOverride(cfg.Override); err != nil {
			return nil, err
		}
	}
	scripts := make([]*script, 0, len(files))
	for i, file := range files {
		s, err := load(file, i == 0, ov)
		if err != nil {
			return nil, err
		}
		scripts = append(scripts, s)
	}
	children := scripts[1:]
	sort.SliceStable(children, func(i, j int) bool {
		if children[i].createdAt != children[j].createdAt {
			return children[i].createdAt < children[j].createdAt
		}
		return children[i].recordedID < children[j].recordedID
	})
	return &Provider{
		name:    cfg.Name,
		models:  slices.Clone(cfg.Models),
		scripts: scripts,
		bound:   map[string]*binding{},
	}, nil
}

func load(file string, primary bool, ov *override) (*script, error) {
	log, err := readFixture(file)
	if err != nil {
		return nil, err
	}
	s := &script{file: file, recordedID: log.id, createdAt: log.createdAt, primary: primary}
	if primary && ov != nil && ov.replace != nil {
		s.entries = ov.replace
		return s, nil
	}
	if s.entries, err = derive(log.events); err != nil {
		return nil, fmt.Errorf("replay fixture %s: %w", file, err)
	}
	if primary && ov != nil {
		if s.entries, err = ov.apply(s.entries); err != nil {
			return nil, err
		}
	}
	for i, e := range s.entries {
		if e.invalid != "" {
			return nil, fmt.Errorf("replay fixture %s: call %d: %s", file, i, e.invalid)
		}
	}
	return s, nil
}

// Name returns the provider route.
func (p *Provider) Name() string { return p.name }

// Models returns the configured catalog.
func (p *Provider) Models() []llm.ModelInfo { return slices.Clone(p.models) }

// Model returns the catalog entry for id, or a bare entry for an unlisted id.
func (p *Provider) Model(id string) llm.ModelInfo {
	for _, m := range p.models {
		if m.ID == id {
			return m
		}
	}
	return llm.ModelInfo{ID: id, Name: id}
}

// Stream replays the next scripted call of req.SessionID without delays.
func (p *Provider) Stream(ctx context.Context, req llm.Request, yield func(llm.Chunk) error) error {
	e, release, err := p.claim(req.SessionID)
	if err != nil {
		return err
	}
	defer release()
	if e, err = resolve(e, req.Messages); err != nil {
		return replayErr("%s: %v", who(req.SessionID), err)
	}
	switch e.kind {
	case kindHang:
		return p.hang(ctx, e, yield)
	default:
		if err := p.play(ctx, e.chunks, yield); err != nil {
			return err
		}
		if e.kind == kindThrow {
			return &llm.Error{Failure: session.Failure{Code: e.code, Message: e.message}}
		}
		return nil
	}
}

func (p *Provider) play(ctx context.Context, chunks []llm.Chunk, yield func(llm.Chunk) error) error {
	for _, c := range chunks {
		if ctx.Err() != nil {
			return aborted(ctx)
		}
		if err := yield(c); err != nil {
			return err
		}
	}
	return nil
}

// hang streams the partial text a live model had produced, marks readiness
// and then waits for cancellation, like a provider that stopped responding.
func (p *Provider) hang(ctx context.Context, e entry, yield func(llm.Chunk) error) error {
	partial := []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: 0, BlockType: session.BlockText},
		{Type: llm.ChunkTextDelta, Index: 0, Delta: "partial"},
	}
	if err := p.play(ctx, partial, yield); err != nil {
		return err
	}
	if e.readyFile != "" {
		if err := os.WriteFile(e.readyFile, nil, 0o644); err != nil {
			return replayErr("hang entry cannot create its ready file: %v", err)
		}
	}
	<-ctx.Done()
	return aborted(ctx)
}

// claim binds a new session to the next script and takes its next entry.
// The cursor advances when the call starts, whatever its outcome.
func (p *Provider) claim(sessionID string) (entry, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.bound[sessionID]
	if !ok {
		if p.next >= len(p.scripts) {
			return entry{}, nil, replayErr("a model call arrived from an unrecorded session (%s, live session #%d); the fixtures record only %d session(s)",
				who(sessionID), len(p.bound)+1, len(p.scripts))
		}
		b = &binding{script: p.scripts[p.next]}
		p.next++
		p.bound[sessionID] = b
	}
	if b.inFlight {
		return entry{}, nil, replayErr("%s started a model call while another was streaming; replay serves one stream per session", who(sessionID))
	}
	if b.cursor >= len(b.script.entries) {
		return entry{}, nil, replayErr("script exhausted: %s requested model call #%d but %s records only %d; re-record the fixture",
			who(sessionID), b.cursor+1, b.script.file, len(b.script.entries))
	}
	e := b.script.entries[b.cursor]
	b.cursor++
	b.inFlight = true
	return e, func() {
		p.mu.Lock()
		b.inFlight = false
		p.mu.Unlock()
	}, nil
}

// Check reports every script that was never bound to a live session or was
// not fully consumed; nil means the run drove exactly the recorded calls.
func (p *Provider) Check() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var problems []string
	for _, s := range p.scripts[p.next:] {
		problems = append(problems, fmt.Sprintf("%s (%d call(s)) was never bound to a live session", s.file, len(s.entries)))
	}
	ids := make([]string, 0, len(p.bound))
	for id := range p.bound {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		return slices.Index(p.scripts, p.bound[ids[i]].script) < slices.Index(p.scripts, p.bound[ids[j]].script)
	})
	for _, id := range ids {
		b := p.bound[id]
		if b.cursor < len(b.script.entries) {
			problems = append(problems, fmt.Sprintf("%s consumed %d of the %d call(s) recorded in %s",
				who(id), b.cursor, len(b.script.entries), b.script.file))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return replayErr("fixture not fully consumed: %s", strings.Join(problems, "; "))
}

func who(sessionID string) string {
	if sessionID == "" {
		return "the anonymous session"
	}
	return fmt.Sprintf("session %q", sessionID)
}

func replayErr(format string, args ...any) *llm.Error {
	return llm.Failf(llm.CodeReplay, "replay: "+format, args...)
}

// aborted reports caller cancellation as an error matching ctx.Err().
func aborted(ctx context.Context) error {
	cause := ctx.Err()
	if c := context.Cause(ctx); c != nil && !errors.Is(c, cause) {
		cause = fmt.Errorf("%w: %w", cause, c)
	}
	return &llm.Error{Failure: session.Failure{Code: llm.CodeAborted, Message: "replay stream aborted by caller"}, Cause: cause}
}
