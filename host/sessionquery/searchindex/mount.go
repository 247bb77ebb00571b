package searchindex

import (
	"context"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// Mount is the one way an index is put in front of a service. It
// validates cfg and, unless OpenAt is "never" (search then stays disabled,
// nothing is opened and ix is nil), creates the index, opens it right away
// for "startup" and installs it as svc's search engine. unmount uninstalls
// and closes it. A failed startup open is INDEX_FAILED and leaves nothing
// installed.
func Mount(ctx context.Context, svc *sessionquery.Service, cfg Config, opts Options) (ix *Index, unmount func() error, err error) {
	cfg = cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	if cfg.OpenAt == OpenAtNever {
		return nil, func() error { return nil }, nil
	}
	ix, err = New(cfg, svc, opts)
	if err != nil {
		return nil, nil, err
	}
	if cfg.OpenAt == OpenAtStartup {
		if err := ix.Open(ctx); err != nil {
			_ = ix.Close()
			return nil, nil, err
		}
	}
	svc.SetEngine(ix)
	return ix, func() error {
		svc.SetEngine(nil)
		return ix.Close()
	}, nil
}
