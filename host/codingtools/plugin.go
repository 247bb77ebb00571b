package codingtools

import (
	"errors"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Plugin returns the coding-tools plugin: it registers the seven tools and
// their prompt sections, configured by the "tools" section.
func Plugin() host.Plugin { return PluginWith(PluginOptions{}) }

// PluginOptions are the plugin's inputs from outside its config section.
type PluginOptions struct {
	// HiddenEnv is passed to Options.HiddenEnv.
	HiddenEnv []string
}

// PluginWith is Plugin with options.
func PluginWith(opts PluginOptions) host.Plugin {
	return host.Plugin{
		Name:     "coding-tools",
		Requires: []string{tools.ServiceKey.Name(), prompt.ServiceKey.Name()},
		Section:  "tools",
		Apply: func(h *host.Host, sec host.Section) (host.Dispose, error) {
			return apply(h, sec, opts)
		},
	}
}

func apply(h *host.Host, sec host.Section, opts PluginOptions) (host.Dispose, error) {
	cfg := DefaultConfig()
	if err := sec.Decode(&cfg); err != nil {
		return nil, err
	}
	reg, err := host.Require(h, tools.ServiceKey)
	if err != nil {
		return nil, err
	}
	prompts, err := host.Require(h, prompt.ServiceKey)
	if err != nil {
		return nil, err
	}
	var (
		mu   sync.Mutex
		undo []func()
	)
	push := func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		undo = append(undo, f)
	}
	dispose := func() error {
		mu.Lock()
		fs := undo
		undo = nil
		mu.Unlock()
		for i := len(fs) - 1; i >= 0; i-- {
			fs[i]()
		}
		return nil
	}
	set, err := New(cfg, Options{HiddenEnv: opts.HiddenEnv, Log: h.Logger(), OnOutputDir: func(sessionID, dir string) func() {
		// The session reads its truncated output back from this directory;
		// looked up now rather than at activation, whichever plugin came
		// first.
		if p, ok := host.Get(h, permissions.ServiceKey); ok {
			return p.TrustReadRoot(sessionID, dir)
		}
		return func() {}
	}, Sandbox: func() *sandbox.Service {
		sb, _ := host.Get(h, sandbox.ServiceKey)
		return sb
	}, Hidden: func() []string {
		// What the policy protects from reads (dsh's own data) the sandbox
		// hides from commands.
		if p, ok := host.Get(h, permissions.ServiceKey); ok {
			return p.ProtectedRoots()
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	push(func() { _ = set.Close() })
	for _, d := range set.Definitions() {
		remove, err := reg.Register(d)
		if err != nil {
			return nil, errors.Join(err, dispose())
		}
		push(remove)
	}
	for _, s := range PromptSections() {
		remove, err := prompts.AddSection(s)
		if err != nil {
			return nil, errors.Join(err, dispose())
		}
		push(remove)
	}
	if sessions, ok := host.Get(h, session.RegistryKey); ok {
		push(sessions.Subscribe(func(c session.RegistryChange) {
			if c.Attached {
				set.Trust(c.Live.ID())
			} else {
				set.Forget(c.Live.ID())
			}
		}))
	}
	return dispose, nil
}
