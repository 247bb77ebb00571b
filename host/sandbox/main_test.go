package sandbox

import (
	"os"
	"testing"
)

// TestMain lets this test binary act as the sandbox launcher, as dsh does.
func TestMain(m *testing.M) {
	MaybeLaunch()
	os.Exit(m.Run())
}
