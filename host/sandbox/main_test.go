package sandbox

import (
	"os"
	"testing"
)

// TestMain lets this test binary act as the sandbox launcher, as dsh does,
// and as the probe programs the tests run inside the sandbox.
func TestMain(m *testing.M) {
	MaybeLaunch()
	if len(os.Args) > 1 {
		if probe, ok := probes[os.Args[1]]; ok {
			os.Exit(probe(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}
