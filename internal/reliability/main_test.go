package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// helperEnv makes a re-executed test binary run a helper instead of the
// tests; its value names the helper.
const helperEnv = "DSH_RELIABILITY_HELPER"

// helpers are the child-process roles, by name.
var helpers = map[string]func() error{}

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		fn, ok := helpers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
			os.Exit(2)
		}
		if err := fn(); err != nil {
			fmt.Fprintln(os.Stderr, "helper "+name+":", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// helperCmd re-executes this test binary as helper name with env added.
func helperCmd(t *testing.T, name string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+name), env...)
	return cmd
}

var (
	buildOnce sync.Once
	binDir    string
	dshBin    string
	buildErr  error
)

// dshBinary builds cmd/dsh once per test run and returns its path.
func dshBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "dsh-reliability-bin-")
		if buildErr != nil {
			return
		}
		dshBin = filepath.Join(binDir, "dsh")
		// go test puts its own toolchain first on PATH.
		cmd := exec.Command("go", "build", "-o", dshBin, "./cmd/dsh")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/dsh: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return dshBin
}
