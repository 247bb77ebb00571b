package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
)

// TestSandboxDenialAsksToRunOutsideInTheDialog runs a command in
// permission mode auto that writes outside the workspace: the sandbox
// denies it, the approval dialog asks whether to run it outside the
// sandbox, and the answer decides. Without a sandbox on this machine the
// command asks before it runs, saying why.
func TestSandboxDenialAsksToRunOutsideInTheDialog(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := sandbox.NewService(sandbox.Detect(exe), sandbox.Config{}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{"y", "n"} {
		t.Run(answer, func(t *testing.T) {
			outside := filepath.Join(t.TempDir(), "hosts")
			b := newBackendWith(t, newScripted(
				toolReply("call_1", "bash", `{"command":"echo evil >> `+outside+`","description":"Edit hosts"}`),
				textReply("", "All done."),
			), codingtools.Options{Sandbox: func() *sandbox.Service { return svc }}, permissions.ModeAuto)
			b.perms.UseSandbox(svc.Support)
			d := startUI(t, b, nil)
			d.submit("add a host")
			if !svc.Support().Available {
				d.waitText("Approval needed", "cannot be sandboxed")
				d.typeText(answer)
				d.waitText("All done.")
				return
			}
			d.waitText("Approval needed", "the command failed in the sandbox, which denied write",
				"outside the sandbox, without its protections?", "command the sandbox stops run outside it")
			d.typeText(answer)
			if answer == "y" {
				d.waitText("ran outside the sandbox", "All done.")
				if _, statErr := os.Stat(outside); statErr != nil {
					t.Fatalf("the approved run did not write: %v", statErr)
				}
				return
			}
			screen := d.waitText("sandbox denied: write", "All done.")
			if _, statErr := os.Stat(outside); statErr == nil || !strings.Contains(screen, "Edit hosts") {
				t.Fatalf("declined: stat %v, screen:\n%s", statErr, screen)
			}
		})
	}
}
