package permissions

import (
	"errors"
	"reflect"
	"slices"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// SectionPath is the permissions config section.
const SectionPath = "permissions"

// Config is the permissions config section, declared to host/config by
// ConfigSchema.
type Config struct {
	Mode string `mapstructure:"mode"`
}

// ConfigSchema declares the permissions section: mode is one of Modes, and
// an untrusted project file may set it only to a mode at least as strict as
// the one it would override (a repository may make dsh more careful, never
// less).
var ConfigSchema = config.Schema{
	Path:     SectionPath,
	Type:     reflect.TypeFor[Config](),
	Rules:    map[string]config.Rule{"mode": config.OneOf(modeNames()...)},
	Stricter: map[string]func(below, project any) bool{"mode": atLeastAsStrict},
}

func modeNames() []string {
	var names []string
	for _, m := range Modes() {
		names = append(names, string(m))
	}
	return names
}

// atLeastAsStrict reports whether the mode named project allows no more
// than the mode named below.
func atLeastAsStrict(below, project any) bool {
	return strictness(Mode(project.(string))) >= strictness(Mode(below.(string)))
}

// strictness orders the modes, most permissive (0) first; an unknown name
// is less strict than any mode.
func strictness(m Mode) int {
	return slices.Index([]Mode{ModeBypass, ModeAuto, ModeAcceptEdits, ModeDefault, ModeReadOnly}, m)
}

// ContextName and ContextOrder place the mode in the runtime context.
const (
	ContextName  = "permissions:mode"
	ContextOrder = 115
)

// ContextPart returns the runtime-context part telling the model the
// calling session's mode.
func (s *Service) ContextPart() prompt.Section {
	return prompt.Section{
		Name:  ContextName,
		Order: ContextOrder,
		Render: func(sc prompt.Scope) string {
			m := s.Mode(sc.SessionID)
			if m == ModeAuto && !s.SandboxSupport().Available {
				return "Permission mode: auto, but commands cannot be sandboxed on this machine, so bash commands need the user's approval; reads, searches and file changes inside the workspace run without approval, and a rejected call must not be retried without asking the user."
			}
			return m.contextText()
		},
	}
}

// Plugin returns the permissions plugin: it provides the Service, installs
// the pre-execute policy and adds the mode to the runtime context.
func Plugin() host.Plugin {
	return host.Plugin{
		Name:     "permissions",
		Requires: []string{tools.ServiceKey.Name(), prompt.ServiceKey.Name()},
		Provides: []string{ServiceKey.Name()},
		Section:  SectionPath,
		Apply:    apply,
	}
}

func apply(h *host.Host, sec host.Section) (host.Dispose, error) {
	var cfg Config
	if err := ConfigSchema.DecodeDefaults(&cfg); err != nil {
		return nil, err
	}
	if err := sec.Decode(&cfg); err != nil {
		return nil, err
	}
	mode, err := ParseMode(cfg.Mode)
	if err != nil {
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
	svc := New(reg, mode)
	// Looked up at each decision, whichever plugin or service came first.
	svc.UseSandbox(func() sandbox.Support {
		if sb, ok := host.Get(h, sandbox.ServiceKey); ok {
			return sb.Support()
		}
		return sandbox.Support{Reason: "no sandbox is mounted in this composition"}
	})
	var undo []func()
	dispose := func() error {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		return nil
	}
	removeCtx, err := prompts.AddContext(svc.ContextPart())
	if err != nil {
		return nil, err
	}
	undo = append(undo, removeCtx)
	unprovide, err := host.Provide(h, ServiceKey, "permissions", svc)
	if err != nil {
		return nil, errors.Join(err, dispose())
	}
	undo = append(undo, unprovide, svc.Install())
	if sessions, ok := host.Get(h, session.RegistryKey); ok {
		undo = append(undo, sessions.Subscribe(func(c session.RegistryChange) {
			if !c.Attached {
				svc.Forget(c.Live.ID())
			}
		}))
	}
	return dispose, nil
}
