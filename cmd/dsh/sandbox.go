package main

import "os"

// sandboxLauncher is this executable, which main turns into the launcher of
// sandboxed commands (sandbox.MaybeLaunch); "" when it cannot be found, so
// commands are never claimed sandboxed without one.
func sandboxLauncher() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}
