package configs

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed default.yaml profiles/*.yaml
var files embed.FS

// DefaultPath is the name under which Default's bytes appear in error messages.
const DefaultPath = "configs/default.yaml"

// FS returns the embedded tree: default.yaml and profiles/*.yaml.
func FS() fs.FS { return files }

// Default returns the built-in defaults (default.yaml).
func Default() []byte {
	b, err := files.ReadFile("default.yaml")
	if err != nil {
		// The file is embedded at build time; failing here means a broken build.
		panic("configs: default.yaml is not embedded: " + err.Error())
	}
	return b
}

// ProfilePath returns the display path of the embedded profile name.
func ProfilePath(name string) string { return "configs/profiles/" + name + ".yaml" }

// Profile returns the embedded profile called name and whether it exists.
func Profile(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, `/\`) || name != path.Clean(name) {
		return nil, false
	}
	b, err := files.ReadFile("profiles/" + name + ".yaml")
	if err != nil {
		return nil, false
	}
	return b, true
}

// Profiles returns the names of the embedded profiles, sorted.
func Profiles() []string {
	entries, err := files.ReadDir("profiles")
	if err != nil {
		panic("configs: profiles/ is not embedded: " + err.Error())
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
