package permissions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// fakeApprover answers every ask with a fixed outcome and records the asks.
type fakeApprover struct {
	mu      sync.Mutex
	outcome string
	err     error
	asked   []string // "tool: reason"
}

func (f *fakeApprover) Approve(_ context.Context, call *tools.Call, reason string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, call.Name+": "+reason)
	return f.outcome, f.err
}

func (f *fakeApprover) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

// fakeTool has the given effect and presents its "path" argument as its
// location, like the coding tools do.
func fakeTool(name string, effect tools.Effect) *tools.Definition {
	return &tools.Definition{
		Name:       name,
		Parameters: tools.Object(tools.Field("path", tools.String("where"))),
		Output:     tools.StringOutput,
		Effect:     effect,
		Execute:    func(context.Context, *tools.Call) (any, error) { return "ran", nil },
		PresentCall: func(call *tools.Call) *tools.CallView {
			var a struct{ Path string }
			_ = json.Unmarshal(call.Args, &a)
			v := &tools.CallView{Kind: tools.KindOther}
			if a.Path != "" {
				v.Locations = []tools.FileLocation{{Path: a.Path}}
			}
			return v
		},
	}
}

var effects = map[string]tools.Effect{
	"reader":   tools.EffectRead,
	"writer":   tools.EffectWrite,
	"runner":   tools.EffectExecute,
	"stateful": tools.EffectState,
}

type fixture struct {
	reg  *tools.Registry
	svc  *Service
	ws   string
	out  string
	live *session.Live
}

func newFixture(t *testing.T, mode Mode) *fixture {
	t.Helper()
	reg := tools.NewRegistry(nil)
	for name, e := range effects {
		if _, err := reg.Register(fakeTool(name, e)); err != nil {
			t.Fatal(err)
		}
	}
	svc := New(reg, mode)
	t.Cleanup(svc.Install())
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	out := filepath.Join(root, "elsewhere")
	for _, d := range []string{ws, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	live := session.NewLive(session.Header{ID: "s1", Cwd: session.Ptr(ws)}, nil, session.LiveOptions{})
	return &fixture{reg: reg, svc: svc, ws: ws, out: out, live: live}
}

func (f *fixture) call(name, path string) *tools.Call {
	args := "{}"
	if path != "" {
		b, _ := json.Marshal(map[string]string{"path": path})
		args = string(b)
	}
	return &tools.Call{CallID: "c1", Name: name, Arguments: args, Args: json.RawMessage(args), Session: f.live, Cwd: f.ws}
}

func (f *fixture) run(name, path string) tools.Result {
	return f.reg.Run(context.Background(), f.call(name, path))
}

func resultText(r tools.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestPermissionMatrix pins every mode × effect × location: whether the call
// runs, is refused by the mode, or asks; and for asks, what each approver
// answer (or none) does.
func TestPermissionMatrix(t *testing.T) {
	const (
		allow = "allow"
		ask   = "ask"
		deny  = "deny"
	)
	policy := []struct {
		mode    Mode
		tool    string
		outside bool
		want    string
	}{
		{ModeDefault, "reader", false, allow},
		{ModeDefault, "reader", true, ask},
		{ModeDefault, "writer", false, ask},
		{ModeDefault, "writer", true, ask},
		{ModeDefault, "runner", false, ask},
		{ModeDefault, "runner", true, ask},
		{ModeDefault, "stateful", false, allow},
		{ModeDefault, "stateful", true, allow},

		{ModeAcceptEdits, "reader", false, allow},
		{ModeAcceptEdits, "reader", true, ask},
		{ModeAcceptEdits, "writer", false, allow},
		{ModeAcceptEdits, "writer", true, ask},
		{ModeAcceptEdits, "runner", false, ask},
		{ModeAcceptEdits, "runner", true, ask},
		{ModeAcceptEdits, "stateful", false, allow},
		{ModeAcceptEdits, "stateful", true, allow},

		// Auto mode without a sandbox (the fixture has none) asks for
		// commands; auto_test.go covers sandboxed ones.
		{ModeAuto, "reader", false, allow},
		{ModeAuto, "reader", true, ask},
		{ModeAuto, "writer", false, allow},
		{ModeAuto, "writer", true, ask},
		{ModeAuto, "runner", false, ask},
		{ModeAuto, "runner", true, ask},
		{ModeAuto, "stateful", false, allow},
		{ModeAuto, "stateful", true, allow},

		{ModeReadOnly, "reader", false, allow},
		{ModeReadOnly, "reader", true, ask},
		{ModeReadOnly, "writer", false, deny},
		{ModeReadOnly, "writer", true, deny},
		{ModeReadOnly, "runner", false, deny},
		{ModeReadOnly, "runner", true, deny},
		{ModeReadOnly, "stateful", false, allow},
		{ModeReadOnly, "stateful", true, allow},

		{ModeBypass, "reader", false, allow},
		{ModeBypass, "reader", true, allow},
		{ModeBypass, "writer", false, allow},
		{ModeBypass, "writer", true, allow},
		{ModeBypass, "runner", false, allow},
		{ModeBypass, "runner", true, allow},
		{ModeBypass, "stateful", false, allow},
		{ModeBypass, "stateful", true, allow},
	}
	answers := []struct {
		name     string
		approver *fakeApprover // nil: headless
		runs     bool
		text     string
	}{
		{"allowed once", &fakeApprover{outcome: tools.AllowedOnce}, true, "ran"},
		{"allowed always", &fakeApprover{outcome: tools.AllowedAlways}, true, "ran"},
		{"rejected", &fakeApprover{outcome: tools.Rejected}, false, "the user rejected tool"},
		{"approver fails", &fakeApprover{err: errors.New("dialog crashed")}, false, "dialog crashed"},
		{"headless", nil, false, "no way to ask"},
	}
	for _, p := range policy {
		for _, a := range answers {
			where := "inside"
			if p.outside {
				where = "outside"
			}
			t.Run(string(p.mode)+"/"+p.tool+"/"+where+"/"+a.name, func(t *testing.T) {
				f := newFixture(t, p.mode)
				var fresh *fakeApprover
				if a.approver != nil {
					fresh = &fakeApprover{outcome: a.approver.outcome, err: a.approver.err}
					t.Cleanup(f.reg.SetApprover(fresh))
				}
				path := filepath.Join(f.ws, "file.txt")
				if p.outside {
					path = filepath.Join(f.out, "file.txt")
				}
				res := f.run(p.tool, path)
				asked := fresh != nil && fresh.count() > 0
				switch p.want {
				case allow:
					if res.IsError || resultText(res) != "ran" || asked {
						t.Fatalf("want allowed without asking; got %q (asked %v)", resultText(res), asked)
					}
				case deny:
					if !res.IsError || res.Error.Code != tools.CodeDenied || !strings.Contains(resultText(res), "read-only permission mode") || asked {
						t.Fatalf("want a read-only denial without asking; got %q (asked %v)", resultText(res), asked)
					}
				case ask:
					if fresh != nil && !asked {
						t.Fatalf("the approver was not asked; got %q", resultText(res))
					}
					if a.runs != !res.IsError || !strings.Contains(resultText(res), a.text) {
						t.Fatalf("got %q (error %v), want runs=%v with %q", resultText(res), res.IsError, a.runs, a.text)
					}
					if res.IsError && res.Error.Code != tools.CodeDenied {
						t.Fatalf("code = %s, want DENIED", res.Error.Code)
					}
				}
			})
		}
	}
}

func TestAskReasonsNameTheModeOrThePaths(t *testing.T) {
	f := newFixture(t, ModeDefault)
	ap := &fakeApprover{outcome: tools.AllowedOnce}
	t.Cleanup(f.reg.SetApprover(ap))
	f.run("runner", "")
	f.run("writer", filepath.Join(f.ws, "a"))
	f.run("reader", filepath.Join(f.out, "b"))
	want := []string{
		"runner: permission mode default asks before running commands",
		"writer: permission mode default asks before changing files",
		"reader: reads outside the workspace: " + filepath.Join(f.out, "b"),
	}
	if strings.Join(ap.asked, "\n") != strings.Join(want, "\n") {
		t.Errorf("asked\n%s\nwant\n%s", strings.Join(ap.asked, "\n"), strings.Join(want, "\n"))
	}
}

func TestAllowAlwaysIsRememberedPerSessionToolAndScope(t *testing.T) {
	f := newFixture(t, ModeDefault)
	ap := &fakeApprover{outcome: tools.AllowedAlways}
	t.Cleanup(f.reg.SetApprover(ap))
	inside := filepath.Join(f.ws, "a")
	outside := filepath.Join(f.out, "a")

	f.run("writer", inside)
	f.run("writer", inside)
	if ap.count() != 1 {
		t.Fatalf("asked %d times, want once for two in-workspace writes", ap.count())
	}
	f.run("writer", outside)
	if ap.count() != 2 {
		t.Fatalf("an in-workspace grant must not cover an outside path (asked %d)", ap.count())
	}
	f.run("writer", outside)
	f.run("writer", inside)
	if ap.count() != 2 {
		t.Fatalf("an outside grant covers both (asked %d)", ap.count())
	}
	f.run("runner", "")
	if ap.count() != 3 {
		t.Fatalf("grants are per tool (asked %d)", ap.count())
	}
	other := &tools.Call{CallID: "c2", Name: "writer", Arguments: `{"path":"` + inside + `"}`,
		Session: session.NewLive(session.Header{ID: "s2", Cwd: session.Ptr(f.ws)}, nil, session.LiveOptions{}), Cwd: f.ws}
	f.reg.Run(context.Background(), other)
	if ap.count() != 4 {
		t.Fatalf("grants are per session (asked %d)", ap.count())
	}
	f.svc.Forget("s1")
	f.run("writer", inside)
	if ap.count() != 5 {
		t.Fatalf("Forget drops grants (asked %d)", ap.count())
	}
}

func TestModeOverridesArePerSessionAndObservable(t *testing.T) {
	f := newFixture(t, ModeDefault)
	var changes []ModeChange
	unsub := f.svc.OnModeChange(func(c ModeChange) { changes = append(changes, c) })
	defer unsub()
	if err := f.svc.SetMode("s1", ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.SetMode("s1", ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.SetMode("s1", "yolo"); err == nil || !strings.Contains(err.Error(), "use one of default, accept-edits, auto, read-only, bypass") {
		t.Fatalf("invalid mode error = %v", err)
	}
	if f.svc.Mode("s1") != ModeReadOnly || f.svc.Mode("s2") != ModeDefault {
		t.Fatalf("modes = %s / %s", f.svc.Mode("s1"), f.svc.Mode("s2"))
	}
	if len(changes) != 1 || changes[0] != (ModeChange{"s1", ModeReadOnly}) {
		t.Fatalf("changes = %+v, want one", changes)
	}
	if res := f.run("writer", filepath.Join(f.ws, "a")); !res.IsError || !strings.Contains(resultText(res), "read-only") {
		t.Fatalf("override not applied: %q", resultText(res))
	}
	f.svc.Forget("s1")
	if f.svc.Mode("s1") != ModeDefault {
		t.Fatal("Forget keeps the override")
	}
}

func TestSymlinkOutOfTheWorkspaceCountsAsOutside(t *testing.T) {
	f := newFixture(t, ModeAcceptEdits)
	if err := os.Symlink(f.out, filepath.Join(f.ws, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.out, "new.txt"), filepath.Join(f.ws, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"escape/x.txt", "dangling", "../elsewhere/x"} {
		d := f.svc.Decide(f.call("writer", p), fakeTool("writer", tools.EffectWrite))
		if d.Kind != tools.Ask || len(d.Outside) != 1 {
			t.Errorf("%s: decision %+v, want ask as outside", p, d)
		}
	}
	d := f.svc.Decide(f.call("writer", "sub/new/file.txt"), fakeTool("writer", tools.EffectWrite))
	if d.Kind != tools.Allow {
		t.Errorf("a new file inside: %+v", d)
	}
}

func TestNoWorkspaceMeansEveryPathIsOutside(t *testing.T) {
	f := newFixture(t, ModeDefault)
	call := f.call("reader", "/tmp/x")
	call.Cwd = ""
	if d := f.svc.Decide(call, fakeTool("reader", tools.EffectRead)); d.Kind != tools.Ask {
		t.Errorf("decision = %+v", d)
	}
}

func TestTrustedReadRootsSkipTheAsk(t *testing.T) {
	f := newFixture(t, ModeDefault)
	ap := &fakeApprover{outcome: tools.Rejected}
	t.Cleanup(f.reg.SetApprover(ap))
	remove := f.svc.TrustReadRoot("s1", f.out)
	if res := f.run("reader", filepath.Join(f.out, "spill.txt")); res.IsError {
		t.Fatalf("read of a trusted root: %q", resultText(res))
	}
	// Another session (another workspace) gets the ordinary rules there.
	other := f.call("reader", filepath.Join(f.out, "spill.txt"))
	other.Session = session.NewLive(session.Header{ID: "s2", Cwd: session.Ptr(f.ws)}, nil, session.LiveOptions{})
	if res := f.reg.Run(context.Background(), other); !res.IsError || ap.count() != 1 {
		t.Fatalf("another session's read of a trusted root: %q, %d asks", resultText(res), ap.count())
	}
	if res := f.run("writer", filepath.Join(f.out, "spill.txt")); !res.IsError {
		t.Fatal("a trusted read root must not allow writes")
	}
	remove()
	if res := f.run("reader", filepath.Join(f.out, "spill.txt")); !res.IsError {
		t.Fatal("removed trust still applies")
	}
}

func TestLaterMiddlewaresCanStillDeny(t *testing.T) {
	f := newFixture(t, ModeBypass)
	t.Cleanup(f.reg.PreExecute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
		return tools.PreDecision{Kind: tools.Deny, Reason: "hook says no"}
	}))
	if res := f.run("reader", ""); !res.IsError || !strings.Contains(resultText(res), "hook says no") {
		t.Fatalf("got %q", resultText(res))
	}
}

func TestAnApprovalCoversALaterAsk(t *testing.T) {
	f := newFixture(t, ModeDefault)
	ap := &fakeApprover{outcome: tools.AllowedOnce}
	t.Cleanup(f.reg.SetApprover(ap))
	t.Cleanup(f.reg.PreExecute.Use(func(ctx context.Context, c *tools.Call, next hook.Next[*tools.Call, tools.PreDecision]) tools.PreDecision {
		return tools.PreDecision{Kind: tools.Ask, Reason: "hook wants a human"}
	}))
	if res := f.run("runner", ""); res.IsError {
		t.Fatalf("got %q", resultText(res))
	}
	if ap.count() != 1 {
		t.Fatalf("asked %d times, want once", ap.count())
	}
}

// blockingApprover waits for the call's context to end.
type blockingApprover struct{ started chan struct{} }

func (b blockingApprover) Approve(ctx context.Context, _ *tools.Call, _ string) (string, error) {
	close(b.started)
	<-ctx.Done()
	return "", ctx.Err()
}

func TestCancelledApprovalDeniesWithoutHanging(t *testing.T) {
	f := newFixture(t, ModeDefault)
	ap := blockingApprover{started: make(chan struct{})}
	t.Cleanup(f.reg.SetApprover(ap))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ap.started
		cancel()
	}()
	res := f.reg.Run(ctx, f.call("runner", ""))
	if !res.IsError || res.Error.Code != tools.CodeAbortedBeforeDispatch || resultText(res) == "ran" {
		t.Fatalf("got %q (%+v), want an abort before dispatch", resultText(res), res.Error)
	}
}

// cancellingApprover reports Cancelled after cancelling the call's context,
// as a front end does when the user stops the turn during the dialog.
type cancellingApprover struct{ cancel context.CancelFunc }

func (c cancellingApprover) Approve(context.Context, *tools.Call, string) (string, error) {
	c.cancel()
	return tools.Cancelled, nil
}

func TestCancelledOutcomeDuringACancelledTurnAborts(t *testing.T) {
	f := newFixture(t, ModeDefault)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Cleanup(f.reg.SetApprover(cancellingApprover{cancel}))
	res := f.reg.Run(ctx, f.call("writer", filepath.Join(f.ws, "a")))
	if !res.IsError || res.Error.Code != tools.CodeAbortedBeforeDispatch {
		t.Fatalf("got %q (%+v)", resultText(res), res.Error)
	}
	// A Cancelled answer while the turn goes on is a denial.
	t.Cleanup(f.reg.SetApprover(&fakeApprover{outcome: tools.Cancelled}))
	res = f.reg.Run(context.Background(), f.call("writer", filepath.Join(f.ws, "a")))
	if !res.IsError || res.Error.Code != tools.CodeDenied || !strings.Contains(resultText(res), "was cancelled") {
		t.Fatalf("got %q (%+v)", resultText(res), res.Error)
	}
}

type panickingApprover struct{}

func (panickingApprover) Approve(context.Context, *tools.Call, string) (string, error) {
	panic("approver bug")
}

func TestAPanickingApproverIsAnErrorResult(t *testing.T) {
	f := newFixture(t, ModeDefault)
	t.Cleanup(f.reg.SetApprover(panickingApprover{}))
	res := f.run("runner", "")
	if !res.IsError || !strings.Contains(resultText(res), "approver bug") {
		t.Fatalf("got %q", resultText(res))
	}
}

// TestHardLinkedFileInsideTheWorkspaceCountsAsOutside pins that a file
// sharing its inode with a file outside the workspace is neither silently
// writable in accept-edits nor silently readable: either would reach the
// outside file.
func TestHardLinkedFileInsideTheWorkspaceCountsAsOutside(t *testing.T) {
	f := newFixture(t, ModeAcceptEdits)
	outside := filepath.Join(f.out, "secret.txt")
	if err := os.WriteFile(outside, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(f.ws, "linked.txt")); err != nil {
		t.Fatal(err)
	}
	if d := f.svc.Decide(f.call("writer", "linked.txt"), fakeTool("writer", tools.EffectWrite)); d.Kind != tools.Ask || len(d.Outside) != 1 {
		t.Errorf("write to a hard-linked file: %+v, want ask", d)
	}
	if d := f.svc.Decide(f.call("reader", "linked.txt"), fakeTool("reader", tools.EffectRead)); d.Kind != tools.Ask || len(d.Outside) != 1 {
		t.Errorf("read of a hard-linked file: %+v, want ask", d)
	}
	if err := os.WriteFile(filepath.Join(f.ws, "plain.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if d := f.svc.Decide(f.call("writer", "plain.txt"), fakeTool("writer", tools.EffectWrite)); d.Kind != tools.Allow {
		t.Errorf("write to a plain file: %+v, want allow", d)
	}
}

// swappingApprover approves, but while the user "looks" the approved file
// is replaced by another one.
type swappingApprover struct {
	path, with string
}

func (s swappingApprover) Approve(context.Context, *tools.Call, string) (string, error) {
	if err := os.Rename(s.with, s.path); err != nil {
		return "", err
	}
	return tools.AllowedOnce, nil
}

// TestTheApprovalIsOfTheFileFinallyOpened pins that an approved outside
// path reaches the tool pinned to the file the approval was asked about:
// the same file opens, a file swapped in meanwhile is refused, and a path
// inside the workspace is confined beneath it.
func TestTheApprovalIsOfTheFileFinallyOpened(t *testing.T) {
	f := newFixture(t, ModeDefault)
	var opened []string
	opener := fakeTool("opener", tools.EffectRead)
	opener.Execute = func(_ context.Context, call *tools.Call) (any, error) {
		var a struct{ Path string }
		_ = json.Unmarshal(call.Args, &a)
		p := a.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(call.Cwd, p)
		}
		fsys := call.Access.FS()
		defer fsys.Close()
		b, err := fsys.ReadFile(p, 1<<10)
		if err != nil {
			return nil, err
		}
		opened = append(opened, string(b))
		return string(b), nil
	}
	if _, err := f.reg.Register(opener); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(f.out, "approved.txt")
	other := filepath.Join(f.out, "other.txt")
	for p, c := range map[string]string{secret: "approved", other: "swapped in", filepath.Join(f.ws, "in.txt"): "inside"} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(f.out, filepath.Join(f.ws, "out-link")); err != nil {
		t.Fatal(err)
	}

	t.Cleanup(f.reg.SetApprover(&fakeApprover{outcome: tools.AllowedOnce}))
	if r := f.run("opener", secret); r.IsError || resultText(r) != "approved" {
		t.Fatalf("approved read: %q", resultText(r))
	}
	if r := f.run("opener", "in.txt"); r.IsError || resultText(r) != "inside" {
		t.Fatalf("inside read: %q", resultText(r))
	}
	// A link out is outside: it asks, and once approved reads the target.
	if r := f.run("opener", "out-link/approved.txt"); r.IsError || resultText(r) != "approved" {
		t.Fatalf("approved read through a link: %q", resultText(r))
	}

	t.Cleanup(f.reg.SetApprover(swappingApprover{path: secret, with: other}))
	r := f.run("opener", secret)
	if !r.IsError || !strings.Contains(resultText(r), "no longer the file that was approved") {
		t.Fatalf("read of a file replaced during the approval: %v %q", r.IsError, resultText(r))
	}
	if len(opened) != 3 {
		t.Fatalf("opened %q", opened)
	}
}
