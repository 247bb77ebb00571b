package spill

import (
	"io"
	"reflect"

	"time"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/outputdir"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// PluginName is the name the plugin is mounted under.
const PluginName = "spill-policy"

// SectionPath is the plugin's config section.
const SectionPath = "plugins.spill"

// Config is the plugins.spill section, declared to host/config by
// ConfigSchema, which checks its values in every layer. Enabled is the
// composition's switch for mounting the plugin. KeepDays and
// KeepTotalBytes are the retention of spilled files (outputdir.Retention).
type Config struct {
	Enabled        bool   `mapstructure:"enabled"`
	MaxInlineBytes int    `mapstructure:"max_inline_bytes"`
	Root           string `mapstructure:"root"`
	KeepDays       int    `mapstructure:"keep_days"`
	KeepTotalBytes int    `mapstructure:"keep_total_bytes"`
}

// ConfigSchema declares plugins.spill: a cap of at least 0 bytes, a
// retention of at least a day and a byte, and a root resolved like every
// config path. An untrusted project may switch the policy and set the cap
// (what the model sees inline), not move or bound the files.
var ConfigSchema = config.Schema{
	Path: SectionPath,
	Type: reflect.TypeFor[Config](),
	Rules: map[string]config.Rule{
		"max_inline_bytes": config.IntAtLeast(0),
		"keep_days":        config.IntAtLeast(1),
		"keep_total_bytes": config.IntAtLeast(1),
	},
	Paths: []string{"root"},
	Safe:  []string{"enabled", "max_inline_bytes"},
}

// Options are the plugin's inputs that are not config.
type Options struct {
	// Random supplies spill file name nonces; nil means crypto/rand. A
	// composition with deterministic ids (the snapshot profile) passes its
	// own source.
	Random io.Reader
}

// Plugin returns the spill policy with a LocalStore at plugins.spill.root.
func Plugin() host.Plugin { return PluginWith(Options{}) }

// PluginWith is Plugin with explicit options.
func PluginWith(opts Options) host.Plugin {
	return host.Plugin{
		Name:     PluginName,
		Requires: []string{tools.ServiceKey.Name()},
		Section:  SectionPath,
		Apply: func(h *host.Host, sec host.Section) (host.Dispose, error) {
			return apply(h, sec, opts)
		},
	}
}

func apply(h *host.Host, sec host.Section, opts Options) (host.Dispose, error) {
	// A host started without a config source passes an empty section:
	// the built-in defaults apply.
	var cfg Config
	if err := ConfigSchema.DecodeDefaults(&cfg); err != nil {
		return nil, err
	}
	if err := sec.Decode(&cfg); err != nil {
		return nil, err
	}
	log := h.Logger().With("plugin", PluginName)
	reg, err := host.Require(h, tools.ServiceKey)
	if err != nil {
		return nil, err
	}
	trust := func(sessionID, dir string) func() {
		// Reading a spilled result back is the point of spilling it; the
		// permissions service (when mounted) must not ask the session that
		// spilled it, and only that one.
		if perms, ok := host.Get(h, permissions.ServiceKey); ok {
			return perms.TrustReadRoot(sessionID, dir)
		}
		return func() {}
	}
	retention := outputdir.Retention{MaxAge: time.Duration(cfg.KeepDays) * 24 * time.Hour, MaxBytes: int64(cfg.KeepTotalBytes)}
	store, err := NewLocalStore(LocalOptions{Root: cfg.Root, Random: opts.Random, OnSessionDir: trust, Retention: retention, Log: log})
	if err != nil {
		return nil, err
	}
	remove := NewPolicy(store, cfg.MaxInlineBytes, log).Install(reg)
	unsubscribe := func() {}
	if sessions, ok := host.Get(h, session.RegistryKey); ok {
		unsubscribe = sessions.Subscribe(func(c session.RegistryChange) {
			if c.Attached {
				store.Trust(c.Live.ID())
			} else {
				store.Forget(c.Live.ID())
			}
		})
	}
	return func() error {
		unsubscribe()
		remove()
		store.Close()
		return nil
	}, nil
}
