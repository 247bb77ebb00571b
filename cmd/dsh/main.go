// Command dsh is a coding agent for editors (over ACP) and terminals. This
// package is the thin entry point: flags, subcommands and wiring; behaviour
// lives in compositions, plugins and host packages.
package main

import (
	"fmt"
	"os"

	launch "github.com/seed-e9b4dba4/dsh/host/sandbox"
)

func main() {
	// First: a sandboxed command's launcher must not pay for dsh's start-up.
	launch.MaybeLaunch()
	if err := hardenProcess(); err != nil {
		fmt.Fprintf(os.Stderr, "dsh: warning: cannot hide dsh's environment from its commands: %v\n", err)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
