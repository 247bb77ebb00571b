package compositions

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildLoggerChoosesLevelAndDestination pins where diagnostics go:
// log.file, else the front end's file, else its writer; and that a quiet
// front end (dsh run) raises only the default level, only on its writer.
func TestBuildLoggerChoosesLevelAndDestination(t *testing.T) {
	dir := t.TempDir()
	userFile, frontFile := filepath.Join(dir, "user.log"), filepath.Join(dir, "logs", "front.log")
	for _, tc := range []struct {
		name     string
		lc       LogConfig
		opts     Options
		file     string // where the records land; "" = the writer
		infoSeen bool
	}{
		{"writer", LogConfig{Level: "info"}, Options{}, "", true},
		{"quiet writer", LogConfig{Level: "info"}, Options{QuietLog: true}, "", false},
		{"quiet writer keeps a chosen level", LogConfig{Level: "debug"}, Options{QuietLog: true}, "", true},
		{"front end file", LogConfig{Level: "info"}, Options{LogFile: frontFile, QuietLog: true}, frontFile, true},
		{"log.file wins", LogConfig{Level: "info", File: userFile}, Options{LogFile: frontFile}, userFile, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			tc.opts.LogWriter = &w
			log, closeLog, err := buildLogger(tc.lc, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			log.Info("info-" + tc.name)
			log.Warn("warn-" + tc.name)
			if err := closeLog(); err != nil {
				t.Fatal(err)
			}
			got := w.String()
			if tc.file != "" {
				data, err := os.ReadFile(tc.file)
				if err != nil {
					t.Fatal(err)
				}
				if got != "" {
					t.Errorf("the writer got %q", got)
				}
				got = string(data)
			}
			if !strings.Contains(got, "warn-"+tc.name) || strings.Contains(got, "info-"+tc.name) != tc.infoSeen {
				t.Errorf("logged %q, want info records shown: %v", got, tc.infoSeen)
			}
		})
	}
	given := slog.New(slog.DiscardHandler)
	if log, _, _ := buildLogger(LogConfig{Level: "info"}, Options{Log: given}); log != given || log.Enabled(context.Background(), slog.LevelError) {
		t.Error("a given logger is not used as is")
	}
}
