package compositions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/mcp"
	"github.com/seed-e9b4dba4/dsh/internal/mcptest"
)

// BenchmarkNewSessionWithThreeMCPServers is the work session/new does for
// an editor that sends three stdio servers: a persisted session and its
// agent, then ConnectMCP, which returns before the servers are up; the
// case without servers is the baseline.
func BenchmarkNewSessionWithThreeMCPServers(b *testing.B) {
	root := b.TempDir()
	home, cwd := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := config.Load(config.Options{Profile: "demo", Home: home, Cwd: cwd,
		Set: []string{"session_query.open_at=never", "log.level=error"},
		Env: func(string) (string, bool) { return "", false }, Sections: ConfigSections()})
	if err != nil {
		b.Fatal(err)
	}
	rt, err := New(b.Context(), Options{Config: cfg, Kind: ACP})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	name, args, env := mcptest.Command("ok", "")
	servers := []mcp.Server{
		{Name: "a", Command: name, Args: args, Env: env},
		{Name: "b", Command: name, Args: args, Env: env},
		{Name: "c", Command: name, Args: args, Env: env},
	}
	for _, bc := range []struct {
		name    string
		servers []mcp.Server
	}{{"without-servers", nil}, {"three-stdio-servers", servers}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				a, err := rt.NewSession(b.Context(), cwd)
				if err != nil {
					b.Fatal(err)
				}
				if bc.servers != nil {
					if err := rt.ConnectMCP(a.ID(), bc.servers); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if err := rt.CloseSession(a); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
