package reliability

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// TestBroadWorkspacesAreRefusedOverACP drives the real dsh acp over stdio.
// Issue 13 finding 5: session/new with cwd / was accepted, and the model
// then read /etc/shadow unasked since it was "inside the workspace"; with
// cwd $HOME, ~/.ssh and the dsh home were. Such a cwd is now an
// invalid-params error that says why and how to override it, and an
// ordinary project still opens.
func TestBroadWorkspacesAreRefusedOverACP(t *testing.T) {
	srv := fakellm.New()
	defer srv.Close()
	h := newHermetic(t)
	c := startACP(t, h, 1<<30, srv.URL) // HOME is h.root, the dsh home h.root/home
	for _, cwd := range []string{"/", h.root, h.home} {
		for _, method := range []string{"session/new", "session/load"} {
			params := map[string]any{"cwd": cwd, "mcpServers": []any{}}
			if method == "session/load" {
				params["sessionId"] = "00000000-0000-4000-8000-000000000000"
			}
			_, e := c.call(method, params)
			if e == nil {
				t.Errorf("%s with cwd %s was accepted", method, cwd)
				continue
			}
			if e.Code != -32602 || !strings.Contains(e.Message, "refusing the workspace "+cwd) || !strings.Contains(e.Message, "--allow-broad-workspace") {
				t.Errorf("%s with cwd %s: %+v, want an invalid-params refusal naming the override", method, cwd, e)
			}
		}
	}
	if _, e := c.call("session/new", map[string]any{"cwd": h.cwd, "mcpServers": []any{}}); e != nil {
		t.Errorf("session/new in a project folder: %+v", e)
	}
	c.close()
}

// Every composition refuses a broad workspace unless told otherwise.
func TestRuntimeRefusesBroadWorkspacesUnlessAllowed(t *testing.T) {
	h := newHermetic(t)
	cfg := h.config(t, "")
	rt := newRuntime(t, compositions.Headless, cfg)
	var be *permissions.BroadWorkspaceError
	if _, err := rt.NewSession(context.Background(), "/"); !errors.As(err, &be) {
		t.Fatalf("NewSession(/) = %v, want a BroadWorkspaceError", err)
	}
	if _, err := compositions.RunTask(context.Background(), rt, "/", "hi"); !errors.As(err, &be) {
		t.Errorf("RunTask(/) = %v, want a BroadWorkspaceError", err)
	}
	broad := filepath.Dir(h.home) // contains the dsh home
	allowed, err := compositions.New(context.Background(), compositions.Options{Config: cfg, Kind: compositions.Headless, AllowBroadWorkspace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer allowed.Close()
	if _, err := allowed.NewSession(context.Background(), broad); err != nil {
		t.Errorf("allowed NewSession(%s): %v", broad, err)
	}
}
