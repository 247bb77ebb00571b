package spill

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// askCounter is an approver that records every question and allows it.
type askCounter struct{ asked []string }

func (a *askCounter) Approve(_ context.Context, call *tools.Call, reason string) (string, error) {
	a.asked = append(a.asked, call.Name+": "+reason)
	return tools.AllowedOnce, nil
}

// TestSpilledResultsAreReadBackWithoutApproval mounts the permissions
// service beside the policy: the spill root lies outside the workspace, but
// reading a spilled result back must not ask, while other outside reads
// still do.
func TestSpilledResultsAreReadBackWithoutApproval(t *testing.T) {
	work, root, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	reg := tools.NewRegistry(nil)
	set, err := codingtools.New(codingtools.DefaultConfig(), codingtools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range set.Definitions() {
		if _, err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	perms := permissions.New(reg, permissions.ModeDefault)
	perms.Install()
	asker := &askCounter{}
	reg.SetApprover(asker)
	h := host.New(nil)
	t.Cleanup(func() { _ = h.Close() })
	for _, p := range []func() error{
		func() error { _, err := host.Provide(h, tools.ServiceKey, "", reg); return err },
		func() error { _, err := host.Provide(h, permissions.ServiceKey, "", perms); return err },
	} {
		if err := p(); err != nil {
			t.Fatal(err)
		}
	}
	section := `{"enabled":true,"max_inline_bytes":1000,"root":` + jsonString(root) + `}`
	if err := h.Start([]host.Plugin{Plugin()}, sections{"plugins.spill": section}); err != nil {
		t.Fatal(err)
	}
	live := session.NewLive(session.Header{ID: "trust", Cwd: session.Ptr(work)}, nil, session.LiveOptions{})
	run := func(name string, args any) tools.Result {
		raw, _ := json.Marshal(args)
		return reg.Run(context.Background(), &tools.Call{CallID: name, Name: name, Arguments: string(raw), Session: live, Cwd: work})
	}
	res := run("bash", map[string]any{"command": "seq 1 2000", "description": "count"})
	locator := locatorIn(t, session.JoinText(res.Content))
	asked := len(asker.asked) // bash itself asks in default mode
	back := run("read", map[string]any{"file_path": locator, "limit": 5})
	if back.IsError || len(asker.asked) != asked {
		t.Fatalf("reading the spill file asked %v (error %v)", asker.asked[asked:], back.IsError)
	}
	run("glob", map[string]any{"pattern": "*", "path": elsewhere})
	if len(asker.asked) != asked+1 || !strings.HasPrefix(asker.asked[asked], "glob:") {
		t.Fatalf("an outside read that is not a spill file must still ask: %v", asker.asked)
	}
	// Another session, in another workspace, reads it only by asking.
	stranger := session.NewLive(session.Header{ID: "stranger", Cwd: session.Ptr(elsewhere)}, nil, session.LiveOptions{})
	reg.Run(context.Background(), &tools.Call{CallID: "r", Name: "read", Arguments: `{"file_path":` + jsonString(locator) + `}`, Session: stranger, Cwd: elsewhere})
	if len(asker.asked) != asked+2 || !strings.HasPrefix(asker.asked[asked+1], "read:") {
		t.Fatalf("another session's read of a spill file must ask: %v", asker.asked)
	}
	asked++
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	run("read", map[string]any{"file_path": locator, "limit": 5})
	if len(asker.asked) != asked+2 {
		t.Fatal("disposing the plugin must withdraw the trust it granted")
	}
}
