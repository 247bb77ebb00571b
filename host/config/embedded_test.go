package config

import (
	"testing"

	"github.com/seed-e9b4dba4/dsh/configs"
)

// parseYAML does not read mcp.servers from dsh's own embedded files; that
// is right only while none of them declares a server or a malformed
// servers entry. Add a shipped server and parseYAML must read them again.
func TestEmbeddedFilesDeclareNoMCPServers(t *testing.T) {
	docs := map[string][]byte{configs.DefaultPath: configs.Default()}
	for _, name := range configs.Profiles() {
		data, _ := configs.Profile(name)
		docs[configs.ProfilePath(name)] = data
	}
	for path, data := range docs {
		l := layer{}
		if errs := parseMCPServers(data, provenance{source: path, builtin: true}, l); len(errs) > 0 || len(l) > 0 {
			t.Errorf("%s declares MCP servers %v (errors %v), which parseYAML skips in embedded files", path, l, errs)
		}
	}
}
