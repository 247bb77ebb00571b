package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sbx "github.com/seed-e9b4dba4/dsh/host/sandbox"
)

func TestDoctorReportsTheSandboxOfThisMachine(t *testing.T) {
	s := newSandbox(t)
	r := s.exec(execOptions{}, "doctor")
	sup := sbx.Detect(dshBinary).Support()
	if !strings.Contains(r.stdout, "command sandbox: "+sup.Summary()) {
		t.Fatalf("doctor output lacks the support summary %q:\n%s", sup.Summary(), r.stdout)
	}
	if !sup.Available {
		// A kernel without Landlock: doctor must say so and fail, never
		// claim a sandbox.
		if r.code != exitError || !strings.Contains(r.stdout, "asks before every command") {
			t.Fatalf("exit %d, output:\n%s%s", r.code, r.stdout, r.stderr)
		}
		return
	}
	for _, want := range []string{
		"launcher: ok",
		"hidden (no read or write): " + s.home,
		"write: " + s.cwd,
		"read-only inside a writable path: " + filepath.Join(s.cwd, ".git"),
		"network: TCP connect and bind denied",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("doctor output lacks %q (exit %d):\n%s%s", want, r.code, r.stdout, r.stderr)
		}
	}
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

// noSandbox is a machine without one.
type noSandbox struct{}

func (noSandbox) Support() sbx.Support {
	return sbx.Support{Name: "landlock", Reason: "this kernel has no Landlock"}
}
func (noSandbox) Start(*exec.Cmd, sbx.Policy) (*sbx.Process, error) {
	panic("Start called without a sandbox")
}
func (noSandbox) Close() error { return nil }

func TestDoctorWithoutASandboxSaysAutoAsks(t *testing.T) {
	s := newSandbox(t)
	g := &globals{env: func(name string) (string, bool) { v, ok := s.env[name]; return v, ok }, cwd: s.cwd}
	cfg, err := g.loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ok, err := writeDoctor(&out, cfg, s.cwd, noSandbox{})
	if err != nil || ok {
		t.Fatalf("writeDoctor = %v, %v; want not ok", ok, err)
	}
	for _, want := range []string{"command sandbox: no sandbox: this kernel has no Landlock", "permission mode auto asks before every command"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
}
