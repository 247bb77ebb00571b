package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// gcSettings reads the GC percent and the memory limit without changing
// them.
func gcSettings() (int, int64) {
	percent := debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// unsetenv removes key for the test, restoring it after.
func unsetenv(t *testing.T, key string) {
	t.Setenv(key, "")
	os.Unsetenv(key)
}

func TestCollectLittleTurnsTheCollectorOffBelowALimitAndRestoresIt(t *testing.T) {
	unsetenv(t, "GOGC")
	unsetenv(t, "GOMEMLIMIT")
	percent, limit := gcSettings()
	restore := collectLittle()
	if p, l := gcSettings(); p != -1 || l != searchMemoryLimit {
		t.Errorf("during: GC percent %d, limit %d; want -1, %d", p, l, searchMemoryLimit)
	}
	restore()
	if p, l := gcSettings(); p != percent || l != limit {
		t.Errorf("after: GC percent %d, limit %d; want %d, %d", p, l, percent, limit)
	}
}

func TestCollectLittleLeavesTheEnvironmentsSettings(t *testing.T) {
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "1GiB")
	percent, limit := gcSettings()
	restore := collectLittle()
	if p, l := gcSettings(); p != percent || l != limit {
		t.Errorf("during: GC percent %d, limit %d; want %d, %d", p, l, percent, limit)
	}
	restore()
}
