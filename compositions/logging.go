package compositions

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

// buildLogger returns the diagnostics logger: the caller's, or one writing to
// log.file (when set) or w at log.level. It never writes to stdout.
func buildLogger(cfg *config.Config, given *slog.Logger, w io.Writer) (*slog.Logger, func() error, error) {
	noop := func() error { return nil }
	if given != nil {
		return given, noop, nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(cfg.Log.Level))); err != nil {
		return nil, nil, fmt.Errorf("log.level %q: %w", cfg.Log.Level, err)
	}
	closeFn := noop
	if cfg.Log.File != "" {
		if err := os.MkdirAll(filepath.Dir(cfg.Log.File), 0o700); err != nil {
			return nil, nil, fmt.Errorf("log.file: %w", err)
		}
		f, err := os.OpenFile(cfg.Log.File, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("log.file: %w", err)
		}
		w, closeFn = f, f.Close
	}
	if w == nil {
		w = io.Discard
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), closeFn, nil
}

// lateHandler is a slog.Handler for diagnostics that start before the
// configuration is loaded: it writes to an early handler until takeOver
// hands it the runtime's, for it and every handler derived from it.
type lateHandler struct {
	target *atomic.Pointer[slog.Handler]
	// derive re-applies the WithAttrs and WithGroup calls that made this
	// handler, in order, to whichever target is current.
	derive []func(slog.Handler) slog.Handler
}

func newLateHandler(early slog.Handler) *lateHandler {
	h := &lateHandler{target: &atomic.Pointer[slog.Handler]{}}
	h.target.Store(&early)
	return h
}

// takeOver sends every later record to next.
func (h *lateHandler) takeOver(next slog.Handler) { h.target.Store(&next) }

func (h *lateHandler) current() slog.Handler {
	t := *h.target.Load()
	for _, d := range h.derive {
		t = d(t)
	}
	return t
}

func (h *lateHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.current().Enabled(ctx, l)
}

func (h *lateHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.current().Handle(ctx, r)
}

func (h *lateHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.with(func(t slog.Handler) slog.Handler { return t.WithAttrs(attrs) })
}

func (h *lateHandler) WithGroup(name string) slog.Handler {
	return h.with(func(t slog.Handler) slog.Handler { return t.WithGroup(name) })
}

func (h *lateHandler) with(d func(slog.Handler) slog.Handler) *lateHandler {
	return &lateHandler{target: h.target, derive: append(slices.Clip(h.derive), d)}
}
