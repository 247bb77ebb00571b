package permissions

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// boxedFixture is an auto-mode fixture with a sandboxed command tool,
// "boxed", that records the Sandbox its call carried and runs its escalation
// when the call asks for one.
type boxedFixture struct {
	*fixture
	got      *tools.Sandbox
	escalate string // the why passed to Escalate; "" runs none
	allowed  bool
	err      error
}

func newBoxedFixture(t *testing.T, support sandbox.Support) *boxedFixture {
	t.Helper()
	bf := &boxedFixture{fixture: newFixture(t, ModeAuto)}
	def := fakeTool("boxed", tools.EffectExecute)
	def.Sandboxed = true
	def.Execute = func(ctx context.Context, call *tools.Call) (any, error) {
		bf.got = call.Sandbox
		if bf.escalate != "" && call.Sandbox != nil && call.Sandbox.Escalate != nil {
			bf.allowed, bf.err = call.Sandbox.Escalate(ctx, call, bf.escalate)
		}
		return "ran", nil
	}
	if _, err := bf.reg.Register(def); err != nil {
		t.Fatal(err)
	}
	bf.svc.UseSandbox(func() sandbox.Support { return support })
	return bf
}

var landlock7 = sandbox.Support{Available: true, Name: "landlock", Version: 7}

func TestAutoModeRunsSandboxableCommandsUnasked(t *testing.T) {
	f := newBoxedFixture(t, landlock7)
	ap := &fakeApprover{outcome: tools.Rejected}
	t.Cleanup(f.reg.SetApprover(ap))
	res := f.run("boxed", "")
	if res.IsError || ap.count() != 0 {
		t.Fatalf("got %q, asked %d times; want it run unasked", resultText(res), ap.count())
	}
	if f.got == nil || f.got.Escalate == nil {
		t.Fatalf("the call carried sandbox %+v, want one that can escalate", f.got)
	}
	// A command tool that cannot be sandboxed still asks, and so does a
	// sandboxable one touching a path outside the workspace.
	if res := f.run("runner", ""); !res.IsError || ap.count() != 1 || !strings.Contains(ap.asked[0], "cannot run in the sandbox") {
		t.Fatalf("unsandboxable command: %q, asks %v", resultText(res), ap.asked)
	}
	if res := f.run("boxed", filepath.Join(f.out, "x")); !res.IsError || ap.count() != 2 {
		t.Fatalf("outside path: %q, asks %v", resultText(res), ap.asked)
	}
	// Other modes never sandbox.
	for _, m := range []Mode{ModeDefault, ModeAcceptEdits, ModeBypass} {
		f.got = nil
		if err := f.svc.SetMode("s1", m); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.reg.SetApprover(&fakeApprover{outcome: tools.AllowedOnce}))
		if res := f.run("boxed", ""); res.IsError || f.got != nil {
			t.Fatalf("mode %s: %q, sandbox %+v; want an unsandboxed run", m, resultText(res), f.got)
		}
	}
}

func TestAutoModeWithoutASandboxAsksAndSaysWhy(t *testing.T) {
	f := newBoxedFixture(t, sandbox.Support{Reason: "this kernel has no Landlock"})
	ap := &fakeApprover{outcome: tools.AllowedOnce}
	t.Cleanup(f.reg.SetApprover(ap))
	res := f.run("boxed", "")
	if res.IsError || ap.count() != 1 || !strings.Contains(ap.asked[0], "cannot be sandboxed: this kernel has no Landlock") {
		t.Fatalf("got %q, asks %v", resultText(res), ap.asked)
	}
	if f.got != nil {
		t.Fatalf("an approved command without a sandbox carried %+v", f.got)
	}
	text := f.svc.ContextPart().Render(prompt.Scope{SessionID: "s1"})
	if !strings.Contains(text, "cannot be sandboxed on this machine") {
		t.Fatalf("runtime context = %q, want it to say commands ask", text)
	}
}

func TestEscalationAsksThroughTheApprover(t *testing.T) {
	why := "the command failed in the sandbox, which denied write /etc/hosts; run it again outside the sandbox?"
	cases := []struct {
		name     string
		approver *fakeApprover
		allowed  bool
		errText  string
	}{
		{"allowed once", &fakeApprover{outcome: tools.AllowedOnce}, true, ""},
		{"rejected", &fakeApprover{outcome: tools.Rejected}, false, ""},
		{"approver fails", &fakeApprover{err: errors.New("dialog crashed")}, false, "dialog crashed"},
		{"headless", nil, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newBoxedFixture(t, landlock7)
			f.escalate = why
			if c.approver != nil {
				t.Cleanup(f.reg.SetApprover(c.approver))
			}
			f.run("boxed", "")
			if f.allowed != c.allowed || (c.errText == "") != (f.err == nil) || (f.err != nil && !strings.Contains(f.err.Error(), c.errText)) {
				t.Fatalf("escalation = %v, %v; want %v, %q", f.allowed, f.err, c.allowed, c.errText)
			}
			if c.approver != nil && (c.approver.count() != 1 || c.approver.asked[0] != "boxed: "+why) {
				t.Fatalf("asks = %v", c.approver.asked)
			}
		})
	}
}

func TestAllowAlwaysOutsideTheSandboxCoversLaterDenialsOfTheSession(t *testing.T) {
	f := newBoxedFixture(t, landlock7)
	f.escalate = "denied write /etc/hosts"
	ap := &fakeApprover{outcome: tools.AllowedAlways}
	t.Cleanup(f.reg.SetApprover(ap))
	f.run("boxed", "")
	f.allowed = false
	f.run("boxed", "")
	if !f.allowed || ap.count() != 1 {
		t.Fatalf("second escalation allowed=%v after %d asks; want allowed from the grant", f.allowed, ap.count())
	}
	// The grant is for running outside the sandbox only: an unsandboxable
	// command still asks.
	f.run("runner", "")
	if ap.count() != 2 {
		t.Fatalf("asks = %v, want the runner asked", ap.asked)
	}
}
