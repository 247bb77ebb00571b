package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/internal/mcptest"
)

func TestMCPListShowsServersStatusAndToolCounts(t *testing.T) {
	s := newSandbox(t)
	if r := s.run("mcp", "list"); r.code != exitOK || !strings.Contains(r.stdout, "no MCP servers are configured") {
		t.Fatalf("without servers: %+v", r)
	}
	entry := func(name, mode string) string {
		cmd, args, _ := mcptest.Command(mode, "")
		return fmt.Sprintf("    %s: {command: %q, args: [%q], env: {%s: %s}}\n", name, cmd, args[0], mcptest.EnvMode, mode)
	}
	s.write(s.home+"/config.yaml", "mcp:\n  servers:\n"+entry("tools", "ok")+entry("broken", "exit"))
	r := s.run("mcp", "list")
	if r.code != exitError {
		t.Fatalf("a failed server should fail the command: %+v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "SERVER") {
		t.Fatalf("output:\n%s", r.stdout)
	}
	if f := strings.Fields(lines[1]); f[0] != "broken" || f[2] != "failed" || !strings.Contains(lines[1], "GITHUB_TOKEN is not set") {
		t.Fatalf("broken row: %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[0] != "tools" || f[1] != "stdio" || f[2] != "ready" || f[3] != "6" {
		t.Fatalf("tools row: %q", lines[2])
	}
	if !strings.Contains(r.stderr, "1 of 2 MCP servers failed to start") {
		t.Fatalf("stderr: %q", r.stderr)
	}
}
