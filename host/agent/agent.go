package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Status is what a front end shows about an agent: "idle" or "running".
type Status string

// Agent statuses.
const (
	StatusIdle    Status = "idle"
	StatusRunning Status = "running"
)

// DefaultMaxResultBytes bounds the content of one tool result as logged
// and sent to the model when Options.MaxResultBytes is zero. JSON escaping
// can make text up to six times longer, so a result this size always fits
// the session log's 16 MiB limit of one event.
const DefaultMaxResultBytes = 1 << 20

// Options configures New. Live and Provider are required; every function
// field has a production default and exists so tests can be deterministic.
type Options struct {
	Live     *session.Live
	Provider llm.Provider
	// Tools is the tool registry; nil means the model gets no tools (and a
	// call it makes anyway fails as an unknown tool).
	Tools *tools.Registry
	// Prompt assembles the system prompt and the runtime context; nil means
	// neither.
	Prompt *prompt.Registry
	// Model is the call config model. Empty resumes the model of the latest
	// logged request header when it used the same provider. Settings the
	// log records (RecordSettings) for the same provider win over both.
	Model string
	// ReasoningEffort and MaxTokens are explicit call config values; "" and
	// 0 let the provider's model defaults apply (recorded as adapterDefaults).
	ReasoningEffort string
	MaxTokens       int
	// MaxParallelToolCalls bounds concurrently dispatched parallel-safe tool
	// calls; 0 means the agent section's default, 1 runs them serially.
	MaxParallelToolCalls int
	// Retry decides which failed model attempts are retried and after how
	// long. The zero value means llm.DefaultRetryPolicy().
	Retry llm.RetryPolicy
	// Compaction's zero fields take the compaction section's defaults.
	Compaction CompactionConfig
	// Resumed says the Live was loaded from a persisted log; New then
	// validates the log (session.ValidateLog) and refuses one it cannot
	// continue. The request header reason ("initial" or "resume") always
	// follows the log itself.
	Resumed bool
	// Mode reports the session's permission mode, which the agent does not
	// own but records with the model (RecordSettings); nil records none.
	Mode func() string
	// Vars adds prompt variables (permission_mode, ...) to the ones the loop
	// sets itself (provider, model, cwd, date); it is called once per step.
	Vars func() map[string]string
	// InstructionsMaxBytes caps the workspace instructions message; 0 means
	// the agent section's default.
	InstructionsMaxBytes int
	// MaxResultBytes bounds a tool result's content (its text and raw
	// blocks) before it is logged; the rest is cut with a note saying so.
	// 0 means DefaultMaxResultBytes.
	MaxResultBytes int
	// ToolsReady, when set, is called before each step's request is
	// assembled; it returns once the session's tool sources that are still
	// starting (MCP servers) are up, or gave up, or ctx ended. It bounds its
	// own wait.
	ToolsReady func(ctx context.Context)

	Now   func() time.Time
	NewID func() string
	// Sleep waits d or until ctx is done, returning ctx's error then.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for retry jitter.
	Rand func() float64
	Log  *slog.Logger
}

type phase int

const (
	phaseIdle phase = iota
	phaseRunning
	phaseMaintenance
)

// activity is one cancellable unit of driver work: a turn or a compaction.
type activity struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	// The fields below are guarded by Agent.mu.
	aborted bool
	// latched records a waking message that arrived while this activity
	// could not take it (aborted, or a maintenance job); the driver runs the
	// next turn for it when the activity ends.
	latched bool
}

// Agent drives one session. Its exported methods are safe for concurrent use.
type Agent struct {
	opts Options
	live *session.Live
	log  *slog.Logger

	root     context.Context
	stopRoot context.CancelFunc
	wake     chan struct{}
	done     chan struct{}

	mu       sync.Mutex
	phase    phase
	act      *activity
	nextTurn []session.Message
	nextStep []session.Message
	// retry asks for a turn that sends the conversation again without a
	// new message (Retry).
	retryTurn bool
	idle      chan struct{} // closed while phase == phaseIdle
	model     string
	effort    string
	closed    bool

	statusObs  hook.Observers[Status]
	published  Status
	publishing bool

	closeOnce sync.Once
	closeErr  error

	// unlogged is how the last turn ended when the log refused to record
	// it (its turn/start or its turn/end); guarded by mu.
	unlogged *session.TurnEndReason

	// Loop state, touched only by the goroutine that runs the current
	// activity (the driver for turns, the Compact caller for maintenance);
	// activities never overlap.
	lastTurn     int
	headerLogged bool
	lastHeader   *session.EpochHeader
	lastContext  *session.RequestContext
	hadSteps     bool
	titled       bool
	hist         *history
}

// New returns an agent for opts.Live and starts its driver goroutine. A Live
// whose log already has turns is continued: the next turn number follows the
// last one and the first request header of this instance is a "resume".
func New(opts Options) (*Agent, error) {
	if opts.Live == nil {
		return nil, errors.New("agent: Options.Live is required")
	}
	if opts.Provider == nil {
		return nil, errors.New("agent: Options.Provider is required")
	}
	opts = withDefaults(opts)
	if err := opts.Retry.Validate(); err != nil {
		return nil, fmt.Errorf("agent: retry policy: %w", err)
	}
	if err := CompactionSchema.Check(opts.Compaction); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	h, events := opts.Live.Snapshot()
	if opts.Resumed {
		if err := session.ValidateLog(h, events); err != nil {
			return nil, fmt.Errorf("agent: session %s cannot be continued: %w", h.ID, err)
		}
	}
	a := &Agent{
		opts:      opts,
		live:      opts.Live,
		log:       opts.Log.With("session", h.ID),
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		idle:      make(chan struct{}),
		published: StatusIdle,
	}
	close(a.idle)
	if err := a.restore(events); err != nil {
		return nil, err
	}
	a.hist = newHistory()
	if err := a.hist.sync(a.live); err != nil {
		return nil, fmt.Errorf("agent: session %s cannot be continued: %w", h.ID, err)
	}
	a.root, a.stopRoot = context.WithCancel(context.Background())
	go a.drive()
	return a, nil
}

func withDefaults(o Options) Options {
	d, comp := defaults()
	if o.MaxParallelToolCalls <= 0 {
		o.MaxParallelToolCalls = d.MaxParallelToolCalls
	}
	if o.Retry.MaxRetries == 0 && len(o.Retry.Codes) == 0 && o.Retry.InitialDelay == 0 && o.Retry.MaxDelay == 0 {
		o.Retry = llm.DefaultRetryPolicy()
	}
	o.Compaction = o.Compaction.withDefaults(comp)
	if o.InstructionsMaxBytes <= 0 {
		o.InstructionsMaxBytes = d.InstructionsMaxBytes
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = uuid.NewString
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Tools == nil {
		// An empty registry answers a hallucinated call with UNKNOWN_TOOL.
		o.Tools = tools.NewRegistry(o.Log)
	}
	return o
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// restore derives the loop state of a continued session from its log.
func (a *Agent) restore(events []session.Event) error {
	open := false
	for _, e := range events {
		switch e.Type {
		case session.TypeTurnStart:
			var d session.TurnStart
			if err := e.DecodeData(&d); err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			a.lastTurn, open = d.Turn, true
		case session.TypeTurnEnd:
			open = false
		case session.TypeStepStart:
			a.hadSteps = true
		case session.TypeSessionTitle:
			a.titled = true
		case session.TypeRequestHeader:
			var d session.RequestHeader
			if err := e.DecodeData(&d); err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			a.lastHeader = &d.Header
		case session.TypeRequestContext:
			var d session.RequestContext
			if err := e.DecodeData(&d); err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			a.lastContext = &d
		}
	}
	if open {
		return fmt.Errorf("agent: turn %d of session %s never ended; load the session through the store so crash repair closes it", a.lastTurn, a.live.ID())
	}
	a.model, a.effort = a.opts.Model, a.opts.ReasoningEffort
	if st, ok := session.LastSettings(events); ok && st.Model != "" && st.Provider == a.opts.Provider.Name() {
		// The user chose them for this session (RecordSettings).
		a.model, a.effort = st.Model, st.ReasoningEffort
	} else if h := a.lastHeader; h != nil && h.Config.Provider == a.opts.Provider.Name() {
		if a.model == "" {
			a.model = h.Config.Model
		}
		explicit := h.AdapterDefaults == nil || !h.AdapterDefaults.ReasoningEffort
		if a.effort == "" && h.Config.Model == a.model && explicit {
			a.effort = h.Config.ReasoningEffort
		}
	}
	if a.model == "" {
		return errors.New("agent: no model: set Options.Model (e.g. from llm.model in the config)")
	}
	return nil
}

// ID returns the agent id, which is its session id.
func (a *Agent) ID() string { return a.live.ID() }

// Session returns the live session the agent appends to.
func (a *Agent) Session() *session.Live { return a.live }

// Status reports whether a turn is running. A compaction started with Compact
// runs while the agent is idle.
func (a *Agent) Status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return statusOf(a.phase)
}

func statusOf(p phase) Status {
	if p == phaseRunning {
		return StatusRunning
	}
	return StatusIdle
}

// OnStatus registers fn for status changes. Calls are serialized and the last
// one always reports the current status; fn may call back into the agent.
// They run on the goroutine that changed the status, so the idle
// notification can arrive just after WhenIdle returned; fn must not call
// Close, which waits for that goroutine.
func (a *Agent) OnStatus(fn func(Status)) (unsubscribe func()) {
	return a.statusObs.Subscribe(fn)
}

// UnloggedEnd reports how the last turn ended when the session log refused
// to record it: not even its turn/start could be written (the prompt was
// dropped) or its turn/end could not. A front end that saw no turn/end for
// its prompt reports this instead of guessing (a full disk is not a
// cancellation). The next turn that starts clears it.
func (a *Agent) UnloggedEnd() (session.TurnEndReason, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.unlogged == nil {
		return session.TurnEndReason{}, false
	}
	return *a.unlogged, true
}

// Model returns the model and reasoning effort used from the next request on.
func (a *Agent) Model() (model, effort string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.model, a.effort
}

// SetModel switches model and reasoning effort ("" = the model's default) from
// the next model request on; the request header records the change, and
// the session's settings record it at once (RecordSettings).
func (a *Agent) SetModel(model, effort string) {
	a.mu.Lock()
	before := [2]string{a.model, a.effort}
	if model != "" {
		a.model = model
	}
	a.effort = effort
	changed := before != [2]string{a.model, a.effort}
	a.mu.Unlock()
	if !changed {
		return
	}
	if err := a.RecordSettings(); err != nil {
		// The switch holds for this process; a later one starts with
		// the configured model.
		a.log.Warn("model change not recorded", "err", err)
	}
}

// RecordSettings appends the session's settings to its log and flushes
// it: the model and reasoning effort in use and the permission mode
// (Options.Mode). A later agent over the log continues with that model
// and effort when the provider is the same (overriding Options.Model); the
// composition restores the mode. SetModel records by itself; the
// composition calls it when the mode changes.
func (a *Agent) RecordSettings() error {
	model, effort := a.Model()
	st := session.Settings{Provider: a.opts.Provider.Name(), Model: model, ReasoningEffort: effort}
	if a.opts.Mode != nil {
		st.Mode = a.opts.Mode()
	}
	if _, err := a.live.Append(session.TypeSettings, st); err != nil {
		return fmt.Errorf("agent: record the settings of session %s: %w", a.live.ID(), err)
	}
	if err := a.live.Flush(); err != nil {
		return fmt.Errorf("agent: record the settings of session %s: %w", a.live.ID(), err)
	}
	return nil
}

// Followup queues msg as the prompt of a turn of its own and wakes the agent.
func (a *Agent) Followup(msg session.Message) { a.send(msg, false) }

// Steer queues msg for the next step of the running turn (the turn then goes
// on even if it was about to end); on an idle agent it opens a turn.
func (a *Agent) Steer(msg session.Message) { a.send(msg, true) }

// Retry runs a new turn on the conversation as it is, without a new
// message, after a turn that failed (a provider outage, a timeout): the
// model sees the failed turn's prompt once, not twice as it would if the
// user sent it again. It returns ErrNothingToRetry unless the last logged
// turn ended in an error, and ErrRunning while a turn or a compaction runs.
func (a *Agent) Retry() error {
	a.mu.Lock()
	switch {
	case a.closed:
		a.mu.Unlock()
		return ErrClosed
	case a.phase != phaseIdle:
		a.mu.Unlock()
		return ErrRunning
	case !a.lastTurnFailed():
		a.mu.Unlock()
		return ErrNothingToRetry
	}
	a.retryTurn = true
	a.run()
	a.mu.Unlock()
	a.publishStatus()
	return nil
}

// lastTurnFailed reports whether the log's last turn ended in an error.
func (a *Agent) lastTurnFailed() bool {
	n := a.live.Len()
	events := a.live.Events(max(0, n-64))
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != session.TypeTurnEnd {
			continue
		}
		var d session.TurnEnd
		return events[i].DecodeData(&d) == nil && d.Reason.Kind == session.EndError
	}
	return false
}

func (a *Agent) send(msg session.Message, nextStep bool) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		a.log.Warn("message sent to a closed agent was dropped", "id", msg.ID)
		return
	}
	if a.act != nil && (a.act.aborted || a.phase == phaseMaintenance) {
		// A cancelled turn or a compaction cannot take new input; it opens
		// the next turn once that activity ends.
		nextStep = false
		a.act.latched = true
	}
	if nextStep {
		a.nextStep = append(a.nextStep, msg)
	} else {
		a.nextTurn = append(a.nextTurn, msg)
	}
	if a.phase == phaseIdle {
		a.run()
	}
	a.mu.Unlock()
	a.publishStatus()
}

// CancelOption adjusts Cancel.
type CancelOption func(*cancelOptions)

type cancelOptions struct{ keepQueued bool }

// KeepQueued makes Cancel keep queued prompts: they wait, without running,
// until the next Followup or Steer wakes the agent.
func KeepQueued() CancelOption { return func(o *cancelOptions) { o.keepQueued = true } }

// Cancel aborts the running turn or compaction. The turn ends
// {kind:"aborted", reason: cause}: streamed text is kept as an interrupted
// assistant message, running tools see a cancelled context and their results
// are committed, unstarted tool calls get aborted results. Queued prompts are
// dropped unless KeepQueued is given.
func (a *Agent) Cancel(cause session.CancelCause, opts ...CancelOption) {
	var o cancelOptions
	for _, fn := range opts {
		fn(&o)
	}
	if cause.Kind == "" {
		cause.Kind = CauseUser
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !o.keepQueued {
		a.nextTurn, a.nextStep, a.retryTurn = nil, nil, false
		if a.act != nil {
			a.act.latched = false
		}
	}
	if a.act != nil {
		a.act.aborted = true
		a.act.cancel(&cancelError{cause})
	}
}

// WhenIdle waits until no turn and no compaction runs, or ctx is done.
func (a *Agent) WhenIdle(ctx context.Context) error {
	for {
		a.mu.Lock()
		idle, ch := a.phase == phaseIdle, a.idle
		a.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close cancels any running work (cause "disposed"), waits until the agent is
// idle, stops the driver and flushes the session. It does not close the Live,
// which belongs to the caller. Close is idempotent.
func (a *Agent) Close() error {
	a.closeOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		a.nextTurn, a.nextStep, a.retryTurn = nil, nil, false
		if a.act != nil {
			a.act.aborted, a.act.latched = true, false
			a.act.cancel(&cancelError{session.CancelCause{Kind: CauseDisposed}})
		}
		a.mu.Unlock()
		a.stopRoot()
		<-a.done
		_ = a.WhenIdle(context.Background())
		if err := a.live.Flush(); err != nil {
			a.closeErr = fmt.Errorf("agent: flush session %s: %w", a.live.ID(), err)
		}
	})
	return a.closeErr
}

// UserText returns a human prompt with one text block.
func UserText(text, id string) session.Message {
	return session.Message{
		Role:    session.RoleUser,
		Content: []session.ContentBlock{session.TextBlock(text)},
		Source:  session.UserSource,
		ID:      id,
	}
}
