package host

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// Key names a service of type T. Declare keys next to the service type, e.g.
// var ServiceKey = host.NewKey[*Registry]("tools").
type Key[T any] struct{ name string }

// NewKey returns the key for the service called name.
func NewKey[T any](name string) Key[T] { return Key[T]{name: name} }

// Name returns the service name.
func (k Key[T]) Name() string { return k.name }

// Section is a plugin's config section. Decode fills out (a pointer to the
// plugin's config struct) and fails on unknown keys or wrong types.
type Section interface {
	Decode(out any) error
}

// Dispose undoes everything a plugin registered.
type Dispose func() error

// Plugin is a unit of host behaviour. Requires and Provides name services;
// they decide activation order. Section is the config path the plugin reads
// (e.g. "plugins.spill"); it may be empty.
type Plugin struct {
	Name     string
	Requires []string
	Provides []string
	Section  string
	Apply    func(h *Host, cfg Section) (Dispose, error)
}

// ConfigSource resolves a plugin's config section by path.
type ConfigSource interface {
	Section(path string) Section
}

// Host owns the service registry and the lifecycle of activated plugins.
type Host struct {
	mu       sync.Mutex
	services map[string]any
	owners   map[string]string
	disposes []named
	closed   bool
	closeErr error
	log      *slog.Logger
}

type named struct {
	name string
	fn   Dispose
}

// New returns an empty host that logs through log (nil means a discarding
// logger).
func New(log *slog.Logger) *Host {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Host{services: map[string]any{}, owners: map[string]string{}, log: log}
}

// Logger returns the host logger. It never writes to stdout.
func (h *Host) Logger() *slog.Logger { return h.log }

// Provide registers v as the service k on behalf of owner ("" for the
// composition itself). A second provider of the same service is an error.
// The returned remover unregisters it.
func Provide[T any](h *Host, k Key[T], owner string, v T) (remove func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if prev, dup := h.owners[k.name]; dup {
		return nil, fmt.Errorf("duplicate service %q: already provided by %s", k.name, ownerName(prev))
	}
	h.services[k.name] = v
	h.owners[k.name] = owner
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(h.services, k.name)
			delete(h.owners, k.name)
		})
	}, nil
}

func ownerName(owner string) string {
	if owner == "" {
		return "the composition"
	}
	return "plugin " + owner
}

// Get returns the service k, if provided.
func Get[T any](h *Host, k Key[T]) (T, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.services[k.name]
	if !ok {
		var zero T
		return zero, false
	}
	t, ok := v.(T)
	return t, ok
}

// Require returns the service k or an error naming it.
func Require[T any](h *Host, k Key[T]) (T, error) {
	v, ok := Get(h, k)
	if !ok {
		return v, fmt.Errorf("service %q is not available", k.name)
	}
	return v, nil
}

// Has reports whether a service called name is provided.
func (h *Host) Has(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.services[name]
	return ok
}

// OnClose registers fn to run at Close, after every plugin disposer that was
// registered before it (disposal is in reverse registration order).
func (h *Host) OnClose(name string, fn Dispose) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.disposes = append(h.disposes, named{name, fn})
}

// Start activates plugins in dependency order. A plugin activates after every
// plugin that provides a service it requires; services provided by the
// composition before Start count as available. On any failure, the plugins
// activated so far are disposed and the error names the plugin.
func (h *Host) Start(plugins []Plugin, cfg ConfigSource) error {
	order, err := h.order(plugins)
	if err != nil {
		return err
	}
	for _, p := range order {
		for _, req := range p.Requires {
			if !h.Has(req) {
				err := fmt.Errorf("plugin %s requires service %q, which no mounted plugin provides", p.Name, req)
				return errors.Join(err, h.Close())
			}
		}
		var section Section = emptySection{}
		if p.Section != "" && cfg != nil {
			section = cfg.Section(p.Section)
		}
		dispose, err := p.Apply(h, section)
		if err != nil {
			err = fmt.Errorf("plugin %s: %w", p.Name, err)
			return errors.Join(err, h.Close())
		}
		for _, prov := range p.Provides {
			if !h.Has(prov) {
				err := fmt.Errorf("plugin %s declares service %q but did not provide it", p.Name, prov)
				if dispose != nil {
					err = errors.Join(err, dispose())
				}
				return errors.Join(err, h.Close())
			}
		}
		if dispose != nil {
			h.OnClose(p.Name, dispose)
		}
		h.log.Debug("plugin activated", "plugin", p.Name)
	}
	return nil
}

// order sorts plugins topologically by Requires/Provides, keeping input order
// among independent plugins.
func (h *Host) order(plugins []Plugin) ([]Plugin, error) {
	provider := map[string]int{}
	names := map[string]bool{}
	for i, p := range plugins {
		if names[p.Name] {
			return nil, fmt.Errorf("plugin %s is mounted twice", p.Name)
		}
		names[p.Name] = true
		for _, s := range p.Provides {
			if j, dup := provider[s]; dup {
				return nil, fmt.Errorf("duplicate service %q: provided by plugins %s and %s", s, plugins[j].Name, p.Name)
			}
			if h.Has(s) {
				return nil, fmt.Errorf("duplicate service %q: plugin %s provides a service the composition already mounted", s, p.Name)
			}
			provider[s] = i
		}
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := make([]int, len(plugins))
	out := make([]Plugin, 0, len(plugins))
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		switch state[i] {
		case done:
			return nil
		case visiting:
			cycle := append(path, plugins[i].Name)
			return fmt.Errorf("plugin dependency cycle: %s", strings.Join(cycle, " -> "))
		}
		state[i] = visiting
		deps := make([]int, 0, len(plugins[i].Requires))
		for _, req := range plugins[i].Requires {
			if j, ok := provider[req]; ok {
				deps = append(deps, j)
			}
		}
		sort.Ints(deps)
		for _, j := range deps {
			if err := visit(j, append(path, plugins[i].Name)); err != nil {
				return err
			}
		}
		state[i] = done
		out = append(out, plugins[i])
		return nil
	}
	for i := range plugins {
		if err := visit(i, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Close disposes every activated plugin and close hook in reverse order. It is
// idempotent; later calls return the first call's error.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		err := h.closeErr
		h.mu.Unlock()
		return err
	}
	h.closed = true
	disposes := h.disposes
	h.disposes = nil
	h.mu.Unlock()
	var errs []error
	for i := len(disposes) - 1; i >= 0; i-- {
		if err := disposes[i].fn(); err != nil {
			errs = append(errs, fmt.Errorf("dispose %s: %w", disposes[i].name, err))
		}
	}
	err := errors.Join(errs...)
	h.mu.Lock()
	h.closeErr = err
	h.mu.Unlock()
	return err
}

type emptySection struct{}

func (emptySection) Decode(any) error { return nil }
