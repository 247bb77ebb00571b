//go:build linux

package main

import "golang.org/x/sys/unix"

// hardenProcess marks dsh non-dumpable: processes of the same user, such as
// the commands the bash tool runs, can then no longer read
// /proc/<dsh>/environ or /proc/<dsh>/mem, where the model key lives, nor
// attach a debugger. dsh itself keeps full access to its own /proc entries.
func hardenProcess() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
