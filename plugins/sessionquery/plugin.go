package sessionquery

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/seed-e9b4dba4/dsh/host"
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

// Config is the validated plugin configuration.
type Config struct {
	// MaxSearchResults caps the hits one search call returns (default 100).
	MaxSearchResults int
	// SearchTimeout is the two search tools' cooperative budget, enforced
	// by a timeout policy when one is mounted (default 30s).
	SearchTimeout time.Duration
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{MaxSearchResults: 100, SearchTimeout: 30 * time.Second}
}

// maxTimerMs is the largest timer delay JavaScript hosts accept; the budget
// keeps that bound so one config means the same everywhere.
const maxTimerMs = 2147483647

// section is the raw plugins.session_query section. The numbers are decoded
// as any so that a fractional or non-finite value, from whatever config
// source, is rejected here with the plugin's own message rather than
// silently truncated. Enabled is the composition's switch; it is read only
// so that strict decoding accepts the section.
type section struct {
	Enabled          bool `mapstructure:"enabled" json:"enabled"`
	MaxSearchResults any  `mapstructure:"max_search_results" json:"max_search_results"`
	SearchTimeoutMs  any  `mapstructure:"search_timeout_ms" json:"search_timeout_ms"`
}

// decodeConfig validates the section before anything is registered.
// Absent values take the defaults.
func decodeConfig(sec host.Section) (Config, error) {
	var raw section
	if err := sec.Decode(&raw); err != nil {
		return Config{}, err
	}
	cfg := DefaultConfig()
	if raw.MaxSearchResults != nil {
		n, ok := integerIn(raw.MaxSearchResults, 1, maxSafeInteger)
		if !ok {
			return Config{}, fmt.Errorf("tool-session-query: %s.max_search_results must be a positive safe integer", SectionPath)
		}
		cfg.MaxSearchResults = int(n)
	}
	if raw.SearchTimeoutMs != nil {
		n, ok := integerIn(raw.SearchTimeoutMs, 1, maxTimerMs)
		if !ok {
			return Config{}, fmt.Errorf("tool-session-query: %s.search_timeout_ms must be a positive integer no greater than 2147483647", SectionPath)
		}
		cfg.SearchTimeout = time.Duration(n) * time.Millisecond
	}
	return cfg, nil
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
	reg, err := host.MustGet(h, tools.ServiceKey)
	if err != nil {
		return nil, err
	}
	prompts, err := host.MustGet(h, prompt.ServiceKey)
	if err != nil {
		return nil, err
	}
	svc, err := host.MustGet(h, sq.ServiceKey)
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

// integerIn reports v as an integer when it is a whole number in lo..hi,
// whatever numeric type the config source produced.
func integerIn(v any, lo, hi int64) (int64, bool) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, i >= lo && i <= hi
		}
		parsed, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return 0, false
		}
		f = parsed
	case float64:
		f = n
	case float32:
		f = float64(n)
	default:
		rv := reflect.ValueOf(v)
		switch {
		case rv.CanInt():
			i := rv.Int()
			return i, i >= lo && i <= hi
		case rv.CanUint():
			u := rv.Uint()
			return int64(u), u >= uint64(lo) && u <= uint64(hi)
		}
		return 0, false
	}
	if math.IsNaN(f) || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, false
	}
	return int64(f), true
}
