package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// dsh acp answers on stdout (frames only), logs nowhere else, and exits 0
// when stdin ends.
func TestACPCommandServesStdinAndExitsCleanlyAtEOF(t *testing.T) {
	code, out, errOut := runACP(t, []string{"--profile", "demo"},
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`not json`,
		`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`)
	if code != exitOK {
		t.Fatalf("exit code %d; stderr:\n%s", code, errOut)
	}
	var ids []any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var f map[string]any
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("stdout carried a non-frame line %q", line)
		}
		ids = append(ids, f["id"])
	}
	if len(ids) != 3 {
		t.Fatalf("%d frames, want 3 (two answers and a parse error): %s", len(ids), out)
	}
	if !strings.Contains(out, `"agentInfo":{"name":"dsh"`) || !strings.Contains(out, `"sessions":[]`) {
		t.Errorf("stdout = %s", out)
	}
}

// A configuration dsh acp cannot start with still lets the editor
// initialize; its session requests answer the reason, and the process
// exits with code 1 and the reason on stderr once stdin ends.
func TestACPCommandWithABadConfigAnswersTheReason(t *testing.T) {
	code, out, errOut := runACP(t, []string{"--profile", "demo", "--set", "log.level=loud"},
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`)
	if code != exitError {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitError, errOut)
	}
	answers := map[float64]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var f map[string]any
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("stdout carried a non-frame line %q", line)
		}
		if id, ok := f["id"].(float64); ok {
			answers[id] = f
		}
	}
	if answers[1]["result"] == nil {
		t.Errorf("initialize answered %v", answers[1])
	}
	e, _ := answers[2]["error"].(map[string]any)
	if msg, _ := e["message"].(string); !strings.Contains(msg, "dsh could not start") || !strings.Contains(msg, "loud") {
		t.Errorf("session/list answered %v", answers[2])
	}
	if !strings.Contains(errOut, "loud") {
		t.Errorf("stderr = %q, want the reason", errOut)
	}
}

// runACP runs dsh acp with flags in a sandbox, its stdin the lines, and
// returns the exit code, stdout and stderr.
func runACP(t *testing.T, flags []string, lines ...string) (int, string, string) {
	t.Helper()
	s := newSandbox(t)
	var out, errOut bytes.Buffer
	g := &globals{
		stdin: strings.NewReader(strings.Join(lines, "\n") + "\n"), stdout: &out, stderr: &errOut, cwd: s.cwd,
		env: func(name string) (string, bool) { v, ok := s.env[name]; return v, ok },
	}
	code := execute(context.Background(), append([]string{"acp"}, flags...), g)
	return code, out.String(), errOut.String()
}
