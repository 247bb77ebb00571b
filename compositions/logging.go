package compositions

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

// LogPath is the log config section, which buildLogger reads.
const LogPath = "log"

// LogConfig is the log section.
type LogConfig struct {
	Level string `mapstructure:"level"`
	File  string `mapstructure:"file"`
}

// LogSchema declares the log section. A project may choose how much is
// logged, not where: log.file is a path dsh would write to.
var LogSchema = config.Schema{
	Path:  LogPath,
	Type:  reflect.TypeFor[LogConfig](),
	Rules: map[string]config.Rule{"level": config.OneOf("debug", "info", "warn", "error")},
	Paths: []string{"file"},
	Safe:  []string{"level"},
}

// buildLogger returns the diagnostics logger: the caller's, or one at
// log.level writing to log.file, else to opts.LogFile, else to
// opts.LogWriter. It never writes to stdout.
func buildLogger(lc LogConfig, opts Options) (*slog.Logger, func() error, error) {
	noop := func() error { return nil }
	if opts.Log != nil {
		return opts.Log, noop, nil
	}
	if lc.File == "" && opts.LogFile == "" && opts.QuietLog && lc.Level == "info" {
		lc.Level = "warn"
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(lc.Level))); err != nil {
		return nil, nil, fmt.Errorf("log.level %q: %w", lc.Level, err)
	}
	closeFn, w := noop, opts.LogWriter
	if file := cmp.Or(lc.File, opts.LogFile); file != "" {
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return nil, nil, fmt.Errorf("log.file: %w", err)
		}
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
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
