package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

// corpusInfo is what the table says about the corpus; it is kept beside
// the corpus so a reused one is described without reading it again.
type corpusInfo struct {
	Preset string `json:"preset"`
	// Generator is the benchcorpus.Version that wrote the corpus (absent,
	// so 0, in manifests from before versions were recorded: version 1).
	Generator   int     `json:"generator"`
	Sessions    int     `json:"sessions"`
	Events      int     `json:"events"`
	Bytes       int64   `json:"bytes"`
	RareSession string  `json:"rareSession"`
	GenSeconds  float64 `json:"genSeconds"`
	Reused      bool    `json:"-"`
}

// ensureCorpus reuses the corpus of l or generates the preset's.
func ensureCorpus(ctx context.Context, l layout, preset string, logf func(string, ...any)) (corpusInfo, error) {
	var ci corpusInfo
	raw, err := os.ReadFile(l.manifest)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &ci); err != nil {
			return ci, fmt.Errorf("%s: %w; delete the directory to generate a new corpus", l.manifest, err)
		}
		if ci.Preset != preset {
			return ci, fmt.Errorf("%s holds the %s corpus, not %s; use another -dir or the matching -preset", l.dir, ci.Preset, preset)
		}
		if gen := max(ci.Generator, 1); gen != benchcorpus.Version {
			return ci, fmt.Errorf("%s holds a corpus of generator version %d, and this benchmark generates version %d (other text, so other figures); delete the directory or use another -dir to generate it again",
				l.dir, gen, benchcorpus.Version)
		}
		ci.Reused = true
		logf("reusing the %s corpus in %s (%d sessions, %d events)", preset, l.dir, ci.Sessions, ci.Events)
		return ci, nil
	case !errors.Is(err, fs.ErrNotExist):
		return ci, err
	}
	if entries, err := os.ReadDir(l.sessions); err == nil && len(entries) > 0 {
		return ci, fmt.Errorf("%s already holds sessions but no %s; point -dir at an empty directory", l.sessions, l.manifest)
	}
	opts, err := benchcorpus.Preset(preset)
	if err != nil {
		return ci, err
	}
	opts.Progress = func(done, total int) {
		if done%1000 == 0 || done == total {
			logf("generating the corpus: %d/%d sessions", done, total)
		}
	}
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	start := time.Now()
	m, err := benchcorpus.Generate(ctx, st, opts)
	if err != nil {
		return ci, err
	}
	ci = corpusInfo{Preset: preset, Generator: benchcorpus.Version, Sessions: m.Sessions, Events: m.Events, Bytes: m.Bytes, RareSession: m.RareSession, GenSeconds: time.Since(start).Seconds()}
	raw, err = json.MarshalIndent(ci, "", "  ")
	if err != nil {
		return ci, err
	}
	if err := os.WriteFile(l.manifest, raw, 0o644); err != nil {
		return ci, err
	}
	return ci, nil
}
