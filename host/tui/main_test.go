package tui

import (
	"os"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sandbox"
)

// TestMain lets this test binary act as the sandbox launcher, as dsh does.
func TestMain(m *testing.M) {
	sandbox.MaybeLaunch()
	os.Exit(m.Run())
}
