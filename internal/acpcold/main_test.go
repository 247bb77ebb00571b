package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The driver runs end to end against a freshly built binary and reports
// every figure; the figures themselves are not asserted.
func TestDriverMeasuresAColdStart(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "dsh")
	build := exec.Command("go", "build", "-o", bin, "./cmd/dsh")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var out strings.Builder
	if err := run(&out, bin, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cat: start", "initialize response", "session/new", "first agent_message_chunk", "prompt answered", "exited"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if err := run(&out, filepath.Join(t.TempDir(), "missing"), 1); err == nil {
		t.Error("a missing binary was accepted")
	}
	_ = os.Remove(bin)
}
