//go:build !linux

package sandbox

func sandboxModes(launcher string) map[string]Sandbox {
	return map[string]Sandbox{"default": Detect(launcher)}
}
