// Command mcpserver is internal/mcptest's MCP server as a program of its
// own, for benchmarks that run dsh as a user does (internal/bench/dshbench):
// with DSH_MCPTEST_MODE set (ok, exit, garbage, hang, crash-once, linger)
// it serves over stdio until its stdin closes.
package main

import (
	"fmt"
	"os"

	"github.com/seed-e9b4dba4/dsh/internal/mcptest"
)

func main() {
	if !mcptest.Serve() {
		fmt.Fprintln(os.Stderr, "mcpserver: set "+mcptest.EnvMode+" (ok, exit, garbage, hang, crash-once or linger)")
		os.Exit(2)
	}
}
