package compositions

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// CheckWorkspace refuses, with a *permissions.BroadWorkspaceError, a
// workspace that is the file system root, the user's home or a folder
// holding dsh's data, unless the runtime was built with
// AllowBroadWorkspace. Every way of starting a session checks it.
func (r *Runtime) CheckWorkspace(cwd string) error {
	if r.allowBroad {
		return nil
	}
	return CheckWorkspace(r.Config, cwd)
}

// CheckWorkspace is the check every runtime applies before a session
// starts, for front ends that ask the user before composing one.
func CheckWorkspace(cfg *config.Config, cwd string) error {
	sessions, err := store.Dir(cfg)
	if err != nil {
		return err
	}
	return permissions.CheckWorkspace(cwd, cfg.UserHome(), cfg.Home, sessions)
}

// NewSession creates a fresh persisted session in cwd (an absolute
// directory) and returns the agent driving it.
func (r *Runtime) NewSession(ctx context.Context, cwd string) (*agent.Agent, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("session workspace must be an absolute path, got %q", cwd)
	}
	ws, err := session.ResolveWorkspace(cwd)
	if err != nil {
		return nil, err
	}
	if err := r.CheckWorkspace(ws.Given); err != nil {
		return nil, err
	}
	h := session.Header{
		Version:         session.FormatVersion,
		ID:              r.NewID(),
		CreatedAt:       r.Now().UnixMilli(),
		Cwd:             session.Ptr(ws.Given),
		DelegationDepth: session.Ptr(0),
	}
	w, err := r.Store.Create(h, nil)
	if err != nil {
		return nil, err
	}
	return r.start(h, nil, w, false)
}

// ResumeSession reopens a persisted session: it takes the log's lock,
// repairs a crashed tail, and continues the log with a new agent. A session
// this runtime already drives is returned as is.
func (r *Runtime) ResumeSession(ctx context.Context, id string) (*agent.Agent, error) {
	if a, ok := r.Agent(id); ok {
		return a, nil
	}
	w, h, events, err := r.Store.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	if h.Cwd != nil {
		if err := r.CheckWorkspace(*h.Cwd); err != nil {
			return nil, errors.Join(err, w.Close())
		}
	}
	return r.start(h, events, w, true)
}

// ForkSession starts a new session seeded with the events of id up to and
// including boundary (session.ForkLatest for the whole log). The source may
// be live in this process or persisted.
func (r *Runtime) ForkSession(ctx context.Context, id string, boundary int) (*agent.Agent, error) {
	var (
		src    session.Header
		events []session.Event
	)
	if a, ok := r.Agent(id); ok {
		src, events = a.Session().Snapshot()
	} else {
		var err error
		if src, events, err = r.Store.Inspect(ctx, id); err != nil {
			return nil, err
		}
	}
	h, seed, err := session.Fork(src, events, boundary, r.NewID(), r.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	if h.Cwd != nil {
		if err := r.CheckWorkspace(*h.Cwd); err != nil {
			return nil, err
		}
	}
	w, err := r.Store.Create(h, seed)
	if err != nil {
		return nil, err
	}
	return r.start(h, seed, w, true)
}

// start attaches a live session over w and starts its agent.
func (r *Runtime) start(h session.Header, events []session.Event, w *store.Writer, seeded bool) (*agent.Agent, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, errors.Join(r.errClosed(), w.Close())
	}
	live := session.NewLive(h, events, session.LiveOptions{
		Sink: w,
		Now:  r.clock.Now,
		OnObserverPanic: func(v any) {
			r.Log.Error("session observer panicked", "session", h.ID, "panic", v)
		},
	})
	if seeded {
		if _, err := session.MarkEndSeed(live); err != nil {
			return nil, errors.Join(err, live.Close())
		}
	}
	if err := r.Sessions.Attach(live); err != nil {
		return nil, errors.Join(err, live.Close())
	}
	a, err := agent.New(r.agentOptions(live, seeded))
	if err != nil {
		r.Sessions.Detach(live)
		return nil, errors.Join(err, live.Close())
	}
	r.outsideMode(h)
	r.restoreMode(h.ID, events)
	r.mu.Lock()
	r.agents[h.ID] = a
	r.writers[h.ID] = w
	r.mu.Unlock()
	if r.Kind != ACP {
		// ACP connects the editor's servers (or these) itself, after
		// session/new named them.
		if err := r.ConnectMCP(h.ID, nil); err != nil {
			r.Log.Warn("mcp: servers not started", "session", h.ID, "err", err)
		}
	}
	return a, nil
}

func (r *Runtime) agentOptions(live *session.Live, resumed bool) agent.Options {
	id := live.ID()
	return agent.Options{
		Live:                 live,
		Provider:             r.Provider,
		Tools:                r.Tools,
		Prompt:               r.Prompt,
		Model:                r.settings.llm.Model,
		ReasoningEffort:      r.settings.llm.ReasoningEffort,
		MaxTokens:            r.settings.llm.MaxTokens,
		MaxParallelToolCalls: r.settings.agent.MaxParallelToolCalls,
		Retry:                r.settings.llm.Retry.Policy(),
		Compaction:           r.settings.compaction,
		Resumed:              resumed,
		Mode:                 func() string { return string(r.Permissions.Mode(id)) },
		Vars: func() map[string]string {
			return map[string]string{"permission_mode": string(r.Permissions.Mode(id))}
		},
		InstructionsMaxBytes: r.settings.agent.InstructionsMaxBytes,
		ToolsReady:           r.waitMCP(id),
		Now:                  r.clock.Now,
		NewID:                r.NewID,
		Log:                  r.Log,
	}
}

// Agent returns the agent driving session id in this runtime.
func (r *Runtime) Agent(id string) (*agent.Agent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.agents[id]
	return a, ok
}

// Agents returns every agent this runtime drives.
func (r *Runtime) Agents() []*agent.Agent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*agent.Agent, 0, len(r.agents))
	for _, a := range r.agents {
		out = append(out, a)
	}
	return out
}

// CloseSession stops a's loop (cancelling a running turn), flushes and
// closes its log, and detaches it from the live registry. The log of a
// session that never recorded an event is removed.
func (r *Runtime) CloseSession(a *agent.Agent) error {
	r.mu.Lock()
	if r.agents[a.ID()] != a {
		r.mu.Unlock()
		return nil
	}
	w := r.writers[a.ID()]
	delete(r.agents, a.ID())
	delete(r.writers, a.ID())
	r.mu.Unlock()
	err := a.Close()
	err = errors.Join(err, r.closeMCP(a.ID()))
	live := a.Session()
	// Detaching notifies the registry's subscribers: the permissions,
	// coding-tools and spill plugins forget the session there.
	r.Sessions.Detach(live)
	if err == nil && live.Len() == 0 {
		// A session that was opened but never used leaves no log behind
		// (it would only clutter /resume and session/list).
		if derr := w.Discard(); derr != nil && !errors.Is(derr, store.ErrNotEmpty) {
			err = derr
		}
	}
	return errors.Join(err, live.Close())
}

// recordModes records a session's settings whenever its permission mode
// changes, whichever front end changed it; a mode restored while the agent
// starts is not recorded again (restoreMode runs before the agent is
// registered).
func (r *Runtime) recordModes() (unsubscribe func()) {
	return r.Permissions.OnModeChange(func(c permissions.ModeChange) {
		a, ok := r.Agent(c.SessionID)
		if !ok {
			return
		}
		if err := a.RecordSettings(); err != nil {
			r.Log.Warn("mode change not recorded", "session", c.SessionID, "err", err)
		}
	})
}

// outsideMode starts a session whose workspace is not the folder of the
// project file that chose the permission mode (an ACP session/new names
// any folder) in the mode the other config layers give: a folder's config,
// trusted or not, configures that folder only.
func (r *Runtime) outsideMode(h session.Header) {
	p := r.Config.Project()
	if p.OutsideMode == "" || h.Cwd == nil || p.Configures(*h.Cwd) || r.Permissions == nil {
		return
	}
	m, err := permissions.ParseMode(p.OutsideMode)
	if err == nil {
		err = r.Permissions.SetMode(h.ID, m)
	}
	if err != nil {
		r.Log.Warn("session mode not set", "session", h.ID, "mode", p.OutsideMode, "err", err)
	}
}

// restoreMode gives a continued session the permission mode its log
// records (agent.RecordSettings); the model and effort the agent restores
// itself. A mode the service refuses leaves the default, with a warning.
func (r *Runtime) restoreMode(id string, events []session.Event) {
	st, ok := session.LastSettings(events)
	if !ok || st.Mode == "" || r.Permissions == nil {
		return
	}
	m, err := permissions.ParseMode(st.Mode)
	if err == nil {
		err = r.Permissions.SetMode(id, m)
	}
	if err != nil {
		r.Log.Warn("session mode not restored", "session", id, "mode", st.Mode, "err", err)
	}
}
