package sessionquery

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// PluginName is the name the plugin is mounted under.
const PluginName = "tool-session-query"

// SectionPath is the plugin's config section.
const SectionPath = "plugins.session_query"

// The system prompt section the plugin contributes.
const (
	PromptSection = "tool:session-query"
	PromptOrder   = 113
	PromptText    = "Use session_search to find relevant work from prior sessions, or session_event_search to search earlier events in one session. Search results are cursor-free and workspace-scoped. Follow a useful hit with session_trace, session_event_trace, or session_event_read when you need lineage, relationships, or exact data."
)

// Tool descriptions (exact model-facing texts).
const (
	descSessionSearch = "Search prior sessions in the caller workspace and return the strongest matching event from each session."
	descEventSearch   = "Search prior events in one authorized session; the current session excludes the step performing this call."
	descSessionTrace  = "Read the authorized session lineage around one session, including complete visible ancestor and descendant relationships."
	descEventTrace    = "Read every direct replacement and relationship to a cited source event for one event in an authorized session."
	descEventRead     = "Read one full unabridged event and optional neighboring raw-event summaries from an authorized session."
)

// Settings is the plugins.session_query section, declared to host/config
// by ConfigSchema: the loader checks every value against the schema's
// rules in every layer, so the plugin takes them as they come. Enabled is
// the composition's switch for mounting the plugin.
type Settings struct {
	Enabled          bool `mapstructure:"enabled"`
	MaxSearchResults int  `mapstructure:"max_search_results"`
	SearchTimeoutMs  int  `mapstructure:"search_timeout_ms"`
}

// ConfigSchema declares plugins.session_query. The bounds are the design's:
// at most 2^53-1 hits and a budget a JavaScript timer accepts.
var ConfigSchema = config.SchemaOf[Settings](SectionPath, map[string]config.Rule{
	"max_search_results": config.IntIn(1, config.MaxSafeInteger),
	"search_timeout_ms":  config.IntIn(1, config.MaxTimerMs),
})

// Config is the plugin configuration the tools use.
type Config struct {
	// MaxSearchResults caps the hits one search call returns.
	MaxSearchResults int
	// SearchTimeout is the two search tools' cooperative budget, enforced
	// by a timeout policy when one is mounted.
	SearchTimeout time.Duration
}

// ConfigFrom converts the section to the tools' configuration.
func ConfigFrom(s Settings) Config {
	return Config{MaxSearchResults: s.MaxSearchResults, SearchTimeout: time.Duration(s.SearchTimeoutMs) * time.Millisecond}
}

// DefaultConfig returns the built-in defaults of configs/default.yaml. It
// panics if the embedded file lacks the section, which the package's tests
// rule out.
func DefaultConfig() Config {
	s, err := defaultSettings()
	if err != nil {
		panic(err)
	}
	return ConfigFrom(s)
}

func defaultSettings() (Settings, error) {
	var s Settings
	err := ConfigSchema.DecodeDefaults(&s)
	return s, err
}

// decodeConfig reads the section over the built-in defaults (a host
// started without a config source passes an empty section).
func decodeConfig(sec host.Section) (Config, error) {
	s, err := defaultSettings()
	if err != nil {
		return Config{}, err
	}
	if err := sec.Decode(&s); err != nil {
		return Config{}, fmt.Errorf("%s: %w", PluginName, err)
	}
	return ConfigFrom(s), nil
}

// Plugin returns the model-facing session-query plugin. It requires the
// tool registry, the system prompt registry and the session-query service;
// the composition mounts it only when plugins.session_query.enabled is set.
func Plugin() host.Plugin {
	return host.Plugin{
		Name:     PluginName,
		Requires: []string{tools.ServiceKey.Name(), prompt.ServiceKey.Name(), sq.ServiceKey.Name()},
		Section:  SectionPath,
		Apply:    apply,
	}
}

func apply(h *host.Host, sec host.Section) (host.Dispose, error) {
	cfg, err := decodeConfig(sec)
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
	svc, err := host.Require(h, sq.ServiceKey)
	if err != nil {
		return nil, err
	}
	return mount(reg, prompts, svc, cfg, h.Logger())
}

// toolset is the five tools over one service.
type toolset struct {
	b   *boundary
	cfg Config
}

// mount registers the five tools in order and the prompt section; the
// returned disposer removes all of them. A failure part way removes what
// was registered.
func mount(reg *tools.Registry, prompts *prompt.Registry, svc Service, cfg Config, log *slog.Logger) (host.Dispose, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &toolset{b: &boundary{svc: svc, log: log}, cfg: cfg}
	var removers []func()
	dispose := func() error {
		for i := len(removers) - 1; i >= 0; i-- {
			removers[i]()
		}
		return nil
	}
	for _, d := range t.definitions() {
		remove, err := reg.Register(d)
		if err != nil {
			return nil, errors.Join(err, dispose())
		}
		removers = append(removers, remove)
	}
	remove, err := prompts.AddSection(prompt.Section{Name: PromptSection, Order: PromptOrder, Text: PromptText})
	if err != nil {
		return nil, errors.Join(err, dispose())
	}
	removers = append(removers, remove)
	return dispose, nil
}

func always(*tools.Call) bool { return true }

// definitions returns the five tools in registration order. The search
// tools are exclusive (no classifier) because one call follows
// generation-bound cursors that any concurrent write invalidates; the exact
// tools tolerate commits in between and run in parallel.
func (t *toolset) definitions() []*tools.Definition {
	return []*tools.Definition{
		{
			Name: ToolSessionSearch, Description: descSessionSearch, Parameters: sessionSearchParams(),
			Output: tools.StringOutput, Effect: tools.EffectRead, Timeout: t.cfg.SearchTimeout,
			Execute: t.sessionSearch, PresentCall: presentSearch("Search prior sessions"),
		},
		{
			Name: ToolEventSearch, Description: descEventSearch, Parameters: eventSearchParams(),
			Output: tools.StringOutput, Effect: tools.EffectRead, Timeout: t.cfg.SearchTimeout,
			Execute: t.eventSearch, PresentCall: presentSearch("Search session events"),
		},
		{
			Name: ToolSessionTrace, Description: descSessionTrace, Parameters: sessionTraceParams(),
			Output: tools.StringOutput, Effect: tools.EffectRead, ConcurrencySafe: always,
			Execute: t.sessionTrace, PresentCall: presentSessionTrace,
		},
		{
			Name: ToolEventTrace, Description: descEventTrace, Parameters: eventTraceParams(),
			Output: tools.StringOutput, Effect: tools.EffectRead, ConcurrencySafe: always,
			Execute: t.eventTrace, PresentCall: presentEvent("Trace"),
		},
		{
			Name: ToolEventRead, Description: descEventRead, Parameters: eventReadParams(),
			Output: tools.StringOutput, Effect: tools.EffectRead, ConcurrencySafe: always,
			Execute: t.eventRead, PresentCall: presentEvent("Read"),
		},
	}
}
