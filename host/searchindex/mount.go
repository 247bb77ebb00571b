package searchindex

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// PluginName names the host plugin that gives the session-query service
// its full-text engine.
const PluginName = "session-query-index"

// IndexKey is the host service holding the index, for front ends that
// show its status or rebuild it. It is absent when search is disabled.
var IndexKey = host.NewKey[*Index]("sessionQueryIndex")

// ConfigFrom maps the session_query config section onto a Config.
func ConfigFrom(c config.SessionQueryConfig) Config {
	return Config{
		Path:         c.Path,
		OpenAt:       c.OpenAt,
		JournalMode:  c.JournalMode,
		DefaultLimit: c.DefaultLimit,
		MaxLimit:     c.MaxLimit,
		SnippetChars: c.SnippetChars,
	}
}

// Plugin is the "session-query-index" plugin: it requires the
// session-query service and installs the index as its search engine (see
// Mount).
func Plugin(cfg Config, opts Options) host.Plugin {
	return host.Plugin{
		Name:     PluginName,
		Requires: []string{sessionquery.ServiceKey.Name()},
		Apply: func(h *host.Host, _ host.Section) (host.Dispose, error) {
			svc, err := host.MustGet(h, sessionquery.ServiceKey)
			if err != nil {
				return nil, err
			}
			return Mount(context.Background(), h, svc, cfg, opts)
		},
	}
}

// Mount validates cfg and, unless openAt is "never" (search then stays
// disabled and nothing is opened), creates the index, opens it right away
// for "startup", installs it as svc's search engine and publishes it under
// IndexKey. The returned dispose uninstalls and closes it. A failed
// startup open is INDEX_FAILED and leaves nothing installed.
func Mount(ctx context.Context, h *host.Host, svc *sessionquery.Service, cfg Config, opts Options) (host.Dispose, error) {
	cfg = cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.OpenAt == OpenAtNever {
		return func() error { return nil }, nil
	}
	ix, err := New(cfg, svc, opts)
	if err != nil {
		return nil, err
	}
	if cfg.OpenAt == OpenAtStartup {
		if err := ix.Open(ctx); err != nil {
			_ = ix.Close()
			return nil, err
		}
	}
	remove, err := host.Provide(h, IndexKey, PluginName, ix)
	if err != nil {
		_ = ix.Close()
		return nil, err
	}
	svc.SetEngine(ix)
	return func() error {
		svc.SetEngine(nil)
		remove()
		return ix.Close()
	}, nil
}
