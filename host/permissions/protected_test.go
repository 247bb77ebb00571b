package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// TestProtectedPathsAlwaysAsk pins issue 13 finding 2: in accept-edits the
// model could write .dsh/config.yaml inside the workspace unasked and so
// turn approvals off for every later start. Writes to dsh's config, its
// home and VCS internals ask in every mode but bypass; reads of the home ask
// even when the workspace contains it.
func TestProtectedPathsAlwaysAsk(t *testing.T) {
	tests := []struct {
		tool, rel string
		protected bool
	}{
		{"writer", ".dsh/config.yaml", true},
		{"writer", ".git/config", true},
		{"writer", ".git/hooks/pre-commit", true},
		{"writer", "sub/.git/config", true},
		{"writer", "home/config.yaml", true},
		{"writer", "home/trusted-folders.json", true},
		{"writer", "src/main.go", false},
		{"writer", "git/config", false},
		{"reader", "home/sessions/x/session.jsonl", true},
		{"reader", "home", true},
		{"reader", ".", true}, // a walk of the workspace would enter the home
		{"reader", ".git/config", false},
		{"reader", ".dsh/config.yaml", false},
		{"reader", "src/main.go", false},
	}
	for _, mode := range []Mode{ModeDefault, ModeAcceptEdits, ModeBypass} {
		for _, tt := range tests {
			t.Run(string(mode)+"/"+tt.tool+"/"+tt.rel, func(t *testing.T) {
				f := newFixture(t, mode)
				t.Cleanup(f.svc.Protect(filepath.Join(f.ws, "home")))
				a := &fakeApprover{outcome: tools.AllowedOnce}
				t.Cleanup(f.reg.SetApprover(a))
				d := f.svc.Decide(f.call(tt.tool, filepath.Join(f.ws, tt.rel)), mustGet(t, f, tt.tool))
				switch {
				case mode == ModeBypass:
					if d.Kind != tools.Allow {
						t.Errorf("bypass: %+v, want allow", d)
					}
				case tt.protected:
					if d.Kind != tools.Ask || !d.Protected || !strings.Contains(d.Reason, "always asks") {
						t.Errorf("%+v, want a protected ask", d)
					}
				default:
					if d.Protected {
						t.Errorf("%+v, want no protection", d)
					}
				}
			})
		}
	}
}

// A symlink inside the workspace that leads into .git is still .git.
func TestProtectedNameThroughASymlink(t *testing.T) {
	f := newFixture(t, ModeAcceptEdits)
	if err := os.MkdirAll(filepath.Join(f.ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", filepath.Join(f.ws, "innocent")); err != nil {
		t.Fatal(err)
	}
	d := f.svc.Decide(f.call("writer", filepath.Join(f.ws, "innocent", "config")), mustGet(t, f, "writer"))
	if d.Kind != tools.Ask || !d.Protected {
		t.Errorf("write through a link to .git: %+v, want a protected ask", d)
	}
}

// "Allow always" does not reach protected paths: neither an earlier grant
// nor an answer to the protected ask itself.
func TestAllowAlwaysDoesNotCoverProtectedPaths(t *testing.T) {
	f := newFixture(t, ModeDefault)
	a := &fakeApprover{outcome: tools.AllowedAlways}
	t.Cleanup(f.reg.SetApprover(a))
	if r := f.run("writer", filepath.Join(f.ws, "a.txt")); r.IsError {
		t.Fatal(resultText(r))
	}
	if r := f.run("writer", filepath.Join(f.ws, "b.txt")); r.IsError || a.count() != 1 {
		t.Fatalf("the grant did not cover a second workspace write: asked %d", a.count())
	}
	for i := range 2 {
		if r := f.run("writer", filepath.Join(f.ws, ".dsh", "config.yaml")); r.IsError {
			t.Fatal(resultText(r))
		}
		if want := 2 + i; a.count() != want {
			t.Errorf("protected write %d: asked %d times in all, want %d", i, a.count(), want)
		}
	}
}

// Headless (no approver) a protected write in accept-edits is refused.
func TestProtectedWriteWithoutApproverIsRefused(t *testing.T) {
	f := newFixture(t, ModeAcceptEdits)
	r := f.run("writer", filepath.Join(f.ws, ".git", "config"))
	if !r.IsError || !strings.Contains(resultText(r), "protected path") {
		t.Errorf("result %q, want a refusal naming the protected path", resultText(r))
	}
}

// A trusted read root inside the protected home (a spill directory) stays
// readable unasked.
func TestTrustedReadRootInsideProtectedDir(t *testing.T) {
	f := newFixture(t, ModeDefault)
	home := filepath.Join(f.out, "home")
	t.Cleanup(f.svc.Protect(home))
	t.Cleanup(f.svc.TrustReadRoot("s1", filepath.Join(home, "spill")))
	if d := f.svc.Decide(f.call("reader", filepath.Join(home, "spill", "x.txt")), mustGet(t, f, "reader")); d.Kind != tools.Allow {
		t.Errorf("read of a trusted root inside the home: %+v", d)
	}
	if d := f.svc.Decide(f.call("reader", filepath.Join(home, "config.yaml")), mustGet(t, f, "reader")); !d.Protected {
		t.Errorf("read of the home's config: %+v, want protected", d)
	}
}

func mustGet(t *testing.T, f *fixture, name string) *tools.Definition {
	t.Helper()
	def, ok := f.reg.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return def
}
