package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// recordingApprover answers every approval with one outcome and counts
// the asks.
type recordingApprover struct {
	mu      sync.Mutex
	outcome string
	asks    []string
}

func (a *recordingApprover) Approve(_ context.Context, call *tools.Call, reason string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asks = append(a.asks, call.Name+": "+reason)
	return a.outcome, nil
}

func (a *recordingApprover) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.asks
	a.asks = nil
	return out
}

const secret = "the outside secret"

// pathTrick names a file outside the workspace three ways: one to read
// (exists), one to create (does not), one to edit (exists).
type pathTrick struct {
	name               string
	read, create, edit string
	readErrorsAnyway   bool // the path cannot be opened whatever the approval
	createErrorsAnyway bool
	outsideCreatedAt   string // where an allowed create lands
}

// trickWorld is a workspace and an outside directory, with the links the
// tricks use. Every outside file holds the secret.
type trickWorld struct {
	ws, out string
	tricks  []pathTrick
}

func newTrickWorld(t *testing.T) trickWorld {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := trickWorld{ws: filepath.Join(root, "ws"), out: filepath.Join(root, "outside")}
	for _, d := range []string{w.ws, w.out, filepath.Join(w.out, "deep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"secret.txt", "edit-me.txt", "deep/inner.txt"} {
		if err := os.WriteFile(filepath.Join(w.out, f), []byte(secret+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.ws, "inside.txt"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"link-file":    filepath.Join(w.out, "secret.txt"),
		"link-edit":    filepath.Join(w.out, "edit-me.txt"),
		"link-dir":     w.out,
		"dangling":     filepath.Join(w.out, "created-through-dangling.txt"),
		"deep":         filepath.Join(w.out, "deep"),
		"relative-out": filepath.Join("..", "outside"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(w.ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	o := w.out
	w.tricks = []pathTrick{
		{name: "dot-dot", read: "../outside/secret.txt", create: "../outside/new-dotdot.txt", edit: "../outside/edit-me.txt", outsideCreatedAt: o + "/new-dotdot.txt"},
		{name: "absolute", read: o + "/secret.txt", create: o + "/new-abs.txt", edit: o + "/edit-me.txt", outsideCreatedAt: o + "/new-abs.txt"},
		// write refuses a dangling link even when allowed (the file it
		// names appeared after no read).
		{name: "symlinked file", read: "link-file", create: "dangling", edit: "link-edit", createErrorsAnyway: true, outsideCreatedAt: o + "/created-through-dangling.txt"},
		{name: "symlinked directory", read: "link-dir/secret.txt", create: "link-dir/new-linkdir.txt", edit: "link-dir/edit-me.txt", outsideCreatedAt: o + "/new-linkdir.txt"},
		{name: "relative symlinked directory", read: "relative-out/secret.txt", create: "relative-out/new-rel.txt", edit: "relative-out/edit-me.txt", outsideCreatedAt: o + "/new-rel.txt"},
		{name: "symlinked parent of a new directory", read: "deep/inner.txt", create: "deep/sub/new-deep.txt", edit: "deep/inner.txt", outsideCreatedAt: o + "/deep/sub/new-deep.txt"},
		{name: "dot-dot through a missing directory", read: "missing/../../outside/secret.txt", create: "missing/../../outside/new-missing.txt", edit: "missing/../../outside/edit-me.txt", readErrorsAnyway: true, createErrorsAnyway: true, outsideCreatedAt: o + "/new-missing.txt"},
		{name: "proc root", read: "/proc/self/root" + o + "/secret.txt", create: "/proc/self/root" + o + "/new-proc.txt", edit: "/proc/self/root" + o + "/edit-me.txt", outsideCreatedAt: o + "/new-proc.txt"},
	}
	return w
}

// TestFileToolsNeverReachOutsideTheWorkspaceWithoutApproval runs read,
// write and edit through the ACP runtime's tool pipeline with paths that
// leave the workspace by traversal, absolute paths, symlinks inside the
// workspace (to a file, to a directory, dangling, relative) and a
// symlinked parent, under each permission mode, with an approver that
// rejects everything. Outside the workspace a read always asks, and a
// write or edit asks (read-only refuses it outright); nothing outside is
// read, created or changed without an approval. bypass runs everything
// without asking, which is what it is for.
func TestFileToolsNeverReachOutsideTheWorkspaceWithoutApproval(t *testing.T) {
	for _, mode := range permissions.Modes() {
		t.Run(string(mode), func(t *testing.T) {
			w := newTrickWorld(t)
			h := hermetic{root: filepath.Dir(w.ws), home: filepath.Join(filepath.Dir(w.ws), "home"), cwd: w.ws}
			if err := os.MkdirAll(h.home, 0o755); err != nil {
				t.Fatal(err)
			}
			rt := newRuntime(t, compositions.ACP, h.config(t, ""))
			a, err := rt.NewSession(context.Background(), w.ws)
			if err != nil {
				t.Fatal(err)
			}
			if err := rt.Permissions.SetMode(a.ID(), mode); err != nil {
				t.Fatal(err)
			}
			ap := &recordingApprover{outcome: tools.Rejected}
			t.Cleanup(rt.Tools.SetApprover(ap))
			live := a.Session()
			n := 0
			run := func(name string, args map[string]any) (tools.Result, string) {
				raw, _ := json.Marshal(args)
				n++
				r := rt.Tools.Run(context.Background(), &tools.Call{CallID: fmt.Sprintf("c%d", n), Name: name, Arguments: string(raw), Session: live, Cwd: w.ws})
				return r, resultText(r)
			}
			bypass := mode == permissions.ModeBypass
			for _, tr := range w.tricks {
				// read
				r, text := run("read", map[string]any{"file_path": tr.read})
				asks := ap.take()
				switch {
				case bypass && !tr.readErrorsAnyway:
					if r.IsError || !strings.Contains(text, secret) || len(asks) != 0 {
						t.Errorf("%s: bypass read: %v %q, asks %q", tr.name, r.IsError, text, asks)
					}
				case !bypass:
					if !r.IsError || strings.Contains(text, secret) || len(asks) != 1 || !strings.Contains(asks[0], "outside the workspace") {
						t.Errorf("%s: read outside: error %v %q, asks %q", tr.name, r.IsError, text, asks)
					}
				}
				// create
				r, text = run("write", map[string]any{"file_path": tr.create, "content": "planted"})
				asks = ap.take()
				_, statErr := os.Lstat(tr.outsideCreatedAt)
				created := statErr == nil
				switch mode {
				case permissions.ModeBypass:
					if !tr.createErrorsAnyway && (r.IsError || !created || len(asks) != 0) {
						t.Errorf("%s: bypass create: %v %q, created %v, asks %q", tr.name, r.IsError, text, created, asks)
					}
				case permissions.ModeReadOnly:
					if !r.IsError || created || len(asks) != 0 || !strings.Contains(text, "read-only") {
						t.Errorf("%s: read-only create: %v %q, created %v, asks %q", tr.name, r.IsError, text, created, asks)
					}
				default:
					if !r.IsError || created || len(asks) != 1 || !strings.Contains(asks[0], "outside the workspace") {
						t.Errorf("%s: create outside: %v %q, created %v, asks %q", tr.name, r.IsError, text, created, asks)
					}
				}
				// edit (bypass reads first, as edit requires)
				if bypass {
					run("read", map[string]any{"file_path": tr.edit})
				}
				r, text = run("edit", map[string]any{"file_path": tr.edit, "old_string": "outside secret", "new_string": "edited"})
				asks = ap.take()
				switch mode {
				case permissions.ModeBypass:
					if !tr.readErrorsAnyway && (r.IsError || len(asks) != 0) {
						t.Errorf("%s: bypass edit: %v %q, asks %q", tr.name, r.IsError, text, asks)
					}
					// The next trick edits the same files.
					for _, f := range []string{"edit-me.txt", "deep/inner.txt"} {
						if err := os.WriteFile(filepath.Join(w.out, f), []byte(secret+"\n"), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				case permissions.ModeReadOnly:
					if !r.IsError || len(asks) != 0 || !strings.Contains(text, "read-only") {
						t.Errorf("%s: read-only edit: %v %q, asks %q", tr.name, r.IsError, text, asks)
					}
				default:
					if !r.IsError || len(asks) != 1 || !strings.Contains(asks[0], "outside the workspace") {
						t.Errorf("%s: edit outside: %v %q, asks %q", tr.name, r.IsError, text, asks)
					}
				}
			}
			if !bypass {
				for _, f := range []string{"secret.txt", "edit-me.txt", "deep/inner.txt"} {
					if b, err := os.ReadFile(filepath.Join(w.out, f)); err != nil || string(b) != secret+"\n" {
						t.Errorf("%s changed without approval: %q %v", f, b, err)
					}
				}
			}
			// Inside the workspace, through a link that stays inside,
			// nothing asks to read, and accept-edits writes freely.
			if err := os.Symlink("inside.txt", filepath.Join(w.ws, "link-inside")); err != nil {
				t.Fatal(err)
			}
			if r, text := run("read", map[string]any{"file_path": "link-inside"}); r.IsError || len(ap.take()) != 0 {
				t.Errorf("read of a link inside: %q", text)
			}
			r, text := run("write", map[string]any{"file_path": "sub/new.txt", "content": "x"})
			asks := ap.take()
			wantAsk := mode == permissions.ModeDefault
			if (len(asks) == 1) != wantAsk || r.IsError != (mode == permissions.ModeDefault || mode == permissions.ModeReadOnly) {
				t.Errorf("write inside: %v %q, asks %q", r.IsError, text, asks)
			}
		})
	}
}

// TestAnApprovedWriteOutsideIsTheOnlyWayOut shows the ask is the gate and
// not a dead end: the same write through a symlinked directory lands once
// the user allows it.
func TestAnApprovedWriteOutsideIsTheOnlyWayOut(t *testing.T) {
	w := newTrickWorld(t)
	h := hermetic{root: filepath.Dir(w.ws), home: filepath.Join(filepath.Dir(w.ws), "home"), cwd: w.ws}
	rt := newRuntime(t, compositions.ACP, h.config(t, "", "permissions.mode=accept-edits"))
	a, err := rt.NewSession(context.Background(), w.ws)
	if err != nil {
		t.Fatal(err)
	}
	ap := &recordingApprover{outcome: tools.AllowedOnce}
	t.Cleanup(rt.Tools.SetApprover(ap))
	r := rt.Tools.Run(context.Background(), &tools.Call{CallID: "c1", Name: "write", Arguments: `{"file_path":"link-dir/approved.txt","content":"ok"}`, Session: a.Session(), Cwd: w.ws})
	if r.IsError || len(ap.take()) != 1 {
		t.Fatalf("approved write: %q", resultText(r))
	}
	if b, err := os.ReadFile(filepath.Join(w.out, "approved.txt")); err != nil || string(b) != "ok" {
		t.Fatalf("approved write did not land: %q %v", b, err)
	}
}
