//go:build linux

package sandbox

// sandboxModes are the ways commands start on this machine: through a
// zygote (the default) and through a fresh launcher each (what a command
// gets when every zygote is busy).
func sandboxModes(launcher string) map[string]Sandbox {
	return map[string]Sandbox{"zygote": Detect(launcher), "launcher": DetectFresh(launcher)}
}
