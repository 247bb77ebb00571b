package compositions

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

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
