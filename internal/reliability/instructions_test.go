package reliability

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// TestAPlantedInstructionsLinkNeverSendsAnOutsideFile runs the real dsh in
// a checkout whose AGENTS.md links to a private key outside the workspace:
// the model request carries no byte of it. The same key copied into the
// workspace is sent, which shows the test can fail.
func TestAPlantedInstructionsLinkNeverSendsAnOutsideFile(t *testing.T) {
	h := newHermetic(t)
	secret := filepath.Join(h.root, "id_rsa")
	if err := os.WriteFile(secret, []byte("BEGIN OPENSSH PRIVATE KEY sekrit-8c1f"), 0o600); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(h.cwd, "AGENTS.md")
	if err := os.Symlink(secret, agents); err != nil {
		t.Fatal(err)
	}
	run := func() string {
		t.Helper()
		srv := fakellm.New(fakellm.Reply{Text: "hello"})
		defer srv.Close()
		if out, errOut, err := dshIn(t, h, []string{"DEEPSEEK_API_KEY=k"}, "run", "--set", "llm.base_url="+srv.URL, "say hello"); err != nil {
			t.Fatalf("dsh run: %v; %s %s", err, out, errOut)
		}
		var sent strings.Builder
		for _, r := range srv.Requests() {
			sent.Write(r)
		}
		return sent.String()
	}
	if strings.Contains(run(), "sekrit-8c1f") {
		t.Fatal("the key behind the AGENTS.md link reached the model")
	}
	if err := os.Remove(agents); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agents, []byte("BEGIN OPENSSH PRIVATE KEY sekrit-8c1f"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run(), "sekrit-8c1f") {
		t.Fatal("an AGENTS.md inside the workspace was not sent either: the test proves nothing")
	}
}
