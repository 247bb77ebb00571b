package spill

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// PluginName is the name the plugin is mounted under.
const PluginName = "spill-policy"

// Config is the plugins.spill section. Enabled is the composition's switch
// for mounting the plugin. MaxInlineBytes is decoded loosely so that a
// fractional or negative value is reported, not truncated; absent means the
// plugin registers nothing.
type Config struct {
	Enabled        bool   `mapstructure:"enabled" json:"enabled"`
	MaxInlineBytes any    `mapstructure:"max_inline_bytes" json:"max_inline_bytes"`
	Root           string `mapstructure:"root" json:"root"`
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
		Section:  "plugins.spill",
		Apply: func(h *host.Host, sec host.Section) (host.Dispose, error) {
			return apply(h, sec, opts)
		},
	}
}

func apply(h *host.Host, sec host.Section, opts Options) (host.Dispose, error) {
	var cfg Config
	if err := sec.Decode(&cfg); err != nil {
		return nil, err
	}
	limit, set, err := maxInlineBytes(cfg.MaxInlineBytes)
	if err != nil {
		return nil, err
	}
	log := h.Logger().With("plugin", PluginName)
	if !set {
		log.Debug("spill-policy: max_inline_bytes is not set; results are not bounded")
		return nil, nil
	}
	reg, err := host.MustGet(h, tools.ServiceKey)
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
	store, err := NewLocalStore(LocalOptions{Root: cfg.Root, Random: opts.Random, OnSessionDir: trust})
	if err != nil {
		return nil, err
	}
	remove := NewPolicy(store, limit, log).Install(reg)
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

// maxInlineBytes validates the configured cap: any integer value >= 0,
// whatever numeric type the config layer produced.
func maxInlineBytes(v any) (limit int, set bool, err error) {
	if v == nil {
		return 0, false, nil
	}
	bad := fmt.Errorf("plugins.spill.max_inline_bytes must be a non-negative integer (got %v)", v)
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || f < 0 || f >= 1<<53 {
		return 0, false, bad
	}
	return int(f), true, nil
}

// number reads v as a float64 when it is any numeric kind (config values,
// JSON numbers).
func number(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return f, err == nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}
