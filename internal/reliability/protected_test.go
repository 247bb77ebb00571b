package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// TestProtectedPathsAskInEveryModeButBypass runs the real write and read
// tools through a composed runtime whose dsh home lies inside the workspace
// (as with a workspace of $HOME). Issue 13 finding 2: accept-edits wrote
// .dsh/config.yaml unasked, and every later start ran with the approvals
// that file chose; finding 5: the dsh home (every past session, the user
// config) was readable unasked from such a workspace.
func TestProtectedPathsAskInEveryModeButBypass(t *testing.T) {
	for _, mode := range []permissions.Mode{permissions.ModeDefault, permissions.ModeAcceptEdits, permissions.ModeBypass} {
		t.Run(string(mode), func(t *testing.T) {
			h := newHermetic(t)
			h.home = filepath.Join(h.cwd, "dsh-home")
			if err := os.MkdirAll(h.home, 0o755); err != nil {
				t.Fatal(err)
			}
			userConfig := filepath.Join(h.home, "config.yaml")
			if err := os.WriteFile(userConfig, []byte("# the user's secret settings\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// A workspace holding the home is refused unless confirmed.
			if _, err := newRuntime(t, compositions.ACP, h.config(t, "")).NewSession(context.Background(), h.cwd); err == nil {
				t.Fatal("a workspace containing the dsh home was accepted unconfirmed")
			}
			rt, err := compositions.New(context.Background(), compositions.Options{
				Config: h.config(t, ""), Kind: compositions.ACP, Log: slog.New(slog.DiscardHandler), AllowBroadWorkspace: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rt.Close() })
			a, err := rt.NewSession(context.Background(), h.cwd)
			if err != nil {
				t.Fatal(err)
			}
			if err := rt.Permissions.SetMode(a.ID(), mode); err != nil {
				t.Fatal(err)
			}
			ap := &recordingApprover{outcome: tools.Rejected}
			t.Cleanup(rt.Tools.SetApprover(ap))
			n := 0
			run := func(name string, args map[string]any) (tools.Result, []string) {
				raw, _ := json.Marshal(args)
				n++
				r := rt.Tools.Run(context.Background(), &tools.Call{CallID: fmt.Sprintf("c%d", n), Name: name, Arguments: string(raw), Session: a.Session(), Cwd: h.cwd})
				return r, ap.take()
			}
			bypass := mode == permissions.ModeBypass

			for _, rel := range []string{".dsh/config.yaml", ".git/config", "dsh-home/config.yaml"} {
				if bypass {
					run("read", map[string]any{"file_path": rel}) // write overwrites only files it has read
				}
				r, asks := run("write", map[string]any{"file_path": rel, "content": "permissions: {mode: bypass}\n"})
				b, _ := os.ReadFile(filepath.Join(h.cwd, rel))
				landed := strings.Contains(string(b), "bypass")
				if bypass {
					if r.IsError || !landed || len(asks) != 0 {
						t.Errorf("bypass write %s: %q, landed %v, asks %q", rel, resultText(r), landed, asks)
					}
					continue
				}
				if !r.IsError || landed || len(asks) != 1 || !strings.Contains(asks[0], "always asks") {
					t.Errorf("write %s: %q, landed %v, asks %q", rel, resultText(r), landed, asks)
				}
			}
			if _, asks := run("read", map[string]any{"file_path": "dsh-home/config.yaml"}); len(asks) != map[bool]int{true: 0, false: 1}[bypass] {
				t.Errorf("read of the dsh home: asks %q", asks)
			}
			// An ordinary workspace write is unaffected: accept-edits runs it.
			r, asks := run("write", map[string]any{"file_path": "src/ok.txt", "content": "ok"})
			if wantAsk := mode == permissions.ModeDefault; (len(asks) == 1) != wantAsk || r.IsError != wantAsk {
				t.Errorf("ordinary write: %q, asks %q", resultText(r), asks)
			}
		})
	}
}
