package compositions

import (
	"errors"

	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/mcp"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/host/tui"
	sqtools "github.com/seed-e9b4dba4/dsh/plugins/sessionquery"
	"github.com/seed-e9b4dba4/dsh/plugins/spill"
	"github.com/seed-e9b4dba4/dsh/plugins/timeout"
)

// ConfigSections returns the config sections the plugins dsh mounts own.
// Every config.Load whose Config reaches New must register them
// (config.Options.Sections); configs/default.yaml defines exactly the
// built-in keys plus these.
func ConfigSections() []config.Schema {
	return []config.Schema{
		store.ConfigSchema, LogSchema, RuntimeSchema, LLMSchema, agent.ConfigSchema, agent.CompactionSchema, mcp.ConfigSchema,
		searchindex.ConfigSchema,
		permissions.ConfigSchema, sandbox.ConfigSchema, codingtools.ConfigSchema, tui.ConfigSchema,
		sqtools.ConfigSchema, timeout.ConfigSchema, spill.ConfigSchema,
	}
}

// settings are the sections the composition reads itself, decoded once.
type settings struct {
	sessions   store.Config
	log        LogConfig
	runtime    RuntimeConfig
	llm        LLMConfig
	agent      agent.Config
	compaction agent.CompactionConfig
	mcp        mcp.Config
}

// settingsOf reads them; it fails when cfg was loaded without
// ConfigSections.
func settingsOf(cfg *config.Config) (settings, error) {
	var (
		s    settings
		errs = make([]error, 7)
	)
	s.log, errs[0] = config.Get[LogConfig](cfg, LogSchema)
	s.runtime, errs[1] = config.Get[RuntimeConfig](cfg, RuntimeSchema)
	s.llm, errs[2] = config.Get[LLMConfig](cfg, LLMSchema)
	s.agent, errs[3] = config.Get[agent.Config](cfg, agent.ConfigSchema)
	s.compaction, errs[4] = config.Get[agent.CompactionConfig](cfg, agent.CompactionSchema)
	s.mcp, errs[5] = config.Get[mcp.Config](cfg, mcp.ConfigSchema)
	s.sessions, errs[6] = config.Get[store.Config](cfg, store.ConfigSchema)
	return s, errors.Join(errs...)
}

// switches are the plugins.*.enabled keys: which opt-in plugins to mount.
type switches struct {
	sessionQuery, timeout, spill bool
}

// switchesOf reads the switches from the plugins' own sections; it fails
// when cfg was loaded without ConfigSections.
func switchesOf(cfg *config.Config) (switches, error) {
	var (
		q  sqtools.Settings
		t  timeout.Config
		sp spill.Config
	)
	for path, out := range map[string]any{sqtools.SectionPath: &q, timeout.SectionPath: &t, spill.SectionPath: &sp} {
		if err := cfg.Section(path).Decode(out); err != nil {
			return switches{}, err
		}
	}
	return switches{sessionQuery: q.Enabled, timeout: t.Enabled, spill: sp.Enabled}, nil
}
