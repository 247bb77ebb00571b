package compositions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/seed-e9b4dba4/dsh/configs/demo"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/llm/replay"
)

// demoModel is the one model the demo offers.
var demoModel = llm.ModelInfo{ID: "dsh-demo", Name: "dsh demo (recorded)"}

// demoTyping paces the replayed text so the demo streams like a model.
const demoTyping = 30 * time.Millisecond

// errDemoOver is the message of a model call beyond the recorded script.
const errDemoOver = "the demo script is over: dsh --profile demo replays a short recorded conversation and has no more replies for this session. " +
	"Start a new session to watch it again, or set DEEPSEEK_API_KEY and run dsh without --profile demo to talk to a real model"

// demoProvider serves the bundled demo conversation (configs/demo) to every
// session from its start, paced like a live stream.
type demoProvider struct {
	script []byte
	pace   time.Duration

	mu       sync.Mutex
	sessions map[string]*replay.Provider
}

func newDemoProvider() *demoProvider {
	return &demoProvider{script: demo.Session(), pace: demoTyping, sessions: map[string]*replay.Provider{}}
}

func (d *demoProvider) Name() string                  { return "demo" }
func (d *demoProvider) Models() []llm.ModelInfo       { return []llm.ModelInfo{demoModel} }
func (d *demoProvider) Model(id string) llm.ModelInfo { return llm.ModelInfo{ID: id, Name: id} }

// Stream replays the session's next recorded call. A session that has
// used up the script gets an error saying the demo is over.
func (d *demoProvider) Stream(ctx context.Context, req llm.Request, yield func(llm.Chunk) error) error {
	p, err := d.replayFor(req.SessionID)
	if err != nil {
		return err
	}
	err = p.Stream(ctx, req, func(c llm.Chunk) error {
		if c.Type == llm.ChunkTextDelta || c.Type == llm.ChunkReasoningDelta {
			if err := pause(ctx, d.pace); err != nil {
				return err
			}
		}
		return yield(c)
	})
	var le *llm.Error
	if errors.As(err, &le) && le.Code == llm.CodeReplay {
		over := llm.Failf(llm.CodeScriptOver, "%s", errDemoOver)
		over.Cause = err
		return over
	}
	return err
}

// replayFor returns the session's own replay of the demo script. The
// replay provider reads fixtures from files, so the embedded log is written
// to a private temporary file for the moment it loads.
func (d *demoProvider) replayFor(sessionID string) (*replay.Provider, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.sessions[sessionID]; ok {
		return p, nil
	}
	f, err := os.CreateTemp("", "dsh-demo-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(d.script)
	if err := errors.Join(werr, f.Close()); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	p, err := replay.New(replay.Config{Name: d.Name(), Fixtures: []string{f.Name()}, Models: d.Models()})
	if err != nil {
		return nil, fmt.Errorf("demo: the bundled script is broken: %w", err)
	}
	d.sessions[sessionID] = p
	return p, nil
}

func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
