package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// pathKeys hold file system paths. Relative values resolve against the
// directory of the file that set them (the working directory for defaults,
// environment and flags); a leading "~/" means the user's home directory.
var pathKeys = []string{
	"home",
}

// userHome finds the user's home directory, preferring the injected
// environment so tests never see the real one.
func userHome(lookup func(string) (string, bool)) (string, error) {
	name := "HOME"
	if runtime.GOOS == "windows" {
		name = "USERPROFILE"
	}
	if h, ok := lookup(name); ok && h != "" {
		return h, nil
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return h, nil
	}
	return "", errors.New("cannot find your home directory: set DSH_HOME or pass --home")
}

// resolvePath makes p absolute. Empty stays empty.
func resolvePath(p, baseDir string, home func() (string, error)) (string, error) {
	if p == "" {
		return p, nil
	}
	if p == "~" || strings.HasPrefix(p, "~/") || (runtime.GOOS == "windows" && strings.HasPrefix(p, `~\`)) {
		h, err := home()
		if err != nil {
			return "", err
		}
		return filepath.Join(h, p[1:]), nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(baseDir, p)
	}
	return filepath.Clean(p), nil
}
