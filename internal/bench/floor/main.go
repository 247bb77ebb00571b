// Command floor is the least a Go program costs to start: it prints one
// line and exits. internal/bench/dshbench runs it beside the whole-process
// rows, so a reader can tell what a row spends in dsh from what any Go
// process spends on that machine (the runtime's start-up and its first
// page faults, which cost several times more in some virtual machines).
package main

import "os"

func main() { _, _ = os.Stdout.WriteString("floor\n") }
