package codingtools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/sandbox"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// sandboxedSet is a Set whose bash runs in this machine's sandbox, launched
// by this test binary (see TestMain), with hidden as dsh's data.
func sandboxedSet(t *testing.T, hidden ...string) (*Set, *sandbox.Service) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := sandbox.NewService(sandbox.Detect(exe), sandbox.Config{}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	cfg := DefaultConfig()
	cfg.Bash.OutputDir = filepath.Join(t.TempDir(), "bash-output")
	cfg.Bash.KillGraceMs = 300
	s, err := New(cfg, Options{
		Sandbox: func() *sandbox.Service { return svc },
		Hidden:  func() []string { return hidden },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, svc
}

// escalation answers a sandboxed call's ask to run outside the sandbox.
type escalation struct {
	mu    sync.Mutex
	allow bool
	asked []string
}

func (e *escalation) sandbox() *tools.Sandbox {
	return &tools.Sandbox{Escalate: func(_ context.Context, _ *tools.Call, why string) (bool, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.asked = append(e.asked, why)
		return e.allow, nil
	}}
}

func TestSandboxedBashRunsConfinedAndSaysSo(t *testing.T) {
	s, svc := sandboxedSet(t)
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, ".git", "config"), "[core]\n")
	writeFile(t, filepath.Join(ws, "README"), "hello\n")
	if err := os.Mkdir(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	call := mkCall(t, "bash", newLive(t, "s1", ws), ws, map[string]any{"command": `echo made > src/out.txt && echo changed > README && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t"`, "description": "write"})
	e := &escalation{}
	call.Sandbox = e.sandbox()
	out, err := s.exec(t, context.Background(), call)
	if !svc.Support().Available {
		// No Landlock here: the command must not run at all, and say why.
		wantCode(t, err, CodeSandbox, "cannot be sandboxed here")
		if _, serr := os.Stat(filepath.Join(ws, "src", "out.txt")); serr == nil {
			t.Fatal("the command ran without a sandbox")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[sandboxed (Landlock ABI") || !strings.Contains(out, "tmp\n") || !strings.HasSuffix(out, "[exit code: 0]") {
		t.Fatalf("output:\n%s", out)
	}
	if got := readFile(t, filepath.Join(ws, "src", "out.txt")); got != "made\n" || readFile(t, filepath.Join(ws, "README")) != "changed\n" {
		t.Fatalf("src/out.txt = %q", got)
	}
	if len(e.asked) != 0 {
		t.Fatalf("a successful command asked %v", e.asked)
	}
	// .git keeps the workspace root from new entries; the denial says so
	// and how to get the file made.
	call = mkCall(t, "bash", newLive(t, "s1", ws), ws, map[string]any{"command": "echo x > new.txt", "description": "new file"})
	call.Sandbox = e.sandbox()
	if out, err = s.exec(t, context.Background(), call); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[sandbox denied: create "+filepath.Join(ws, "new.txt")+" (in the sandbox no new file or folder can be made directly in "+ws) || len(e.asked) != 1 {
		t.Fatalf("root creation: asked %v, output:\n%s", e.asked, out)
	}
	// The session's $TMPDIR goes with the session.
	tmp, err := s.temps.dir("s1")
	if err != nil {
		t.Fatal(err)
	}
	s.Forget("s1")
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("the session's temp dir %s survived Forget: %v", tmp, err)
	}
}

func TestSandboxDenialAsksToRunOutside(t *testing.T) {
	for _, allow := range []bool{false, true} {
		name := "declined"
		if allow {
			name = "approved"
		}
		t.Run(name, func(t *testing.T) {
			s, svc := sandboxedSet(t)
			if !svc.Support().Available {
				t.Log("no sandbox on this machine: TestSandboxedBashRunsConfinedAndSaysSo checks the refusal")
				return
			}
			ws := workspace(t)
			outside := filepath.Join(workspace(t), "hosts")
			call := mkCall(t, "bash", newLive(t, "s1", ws), ws, map[string]any{"command": "echo 127.0.0.1 evil > " + outside, "description": "edit hosts"})
			e := &escalation{allow: allow}
			call.Sandbox = e.sandbox()
			out, err := s.exec(t, context.Background(), call)
			if err != nil {
				t.Fatal(err)
			}
			if len(e.asked) != 1 || !strings.Contains(e.asked[0], "denied write "+outside) || !strings.Contains(e.asked[0], "outside the sandbox") {
				t.Fatalf("asked %q", e.asked)
			}
			_, statErr := os.Stat(outside)
			if allow {
				if statErr != nil || !strings.Contains(out, "[ran outside the sandbox, approved by the user after the sandbox denied write "+outside+"]") || !strings.HasSuffix(out, "[exit code: 0]") {
					t.Fatalf("approved rerun: stat %v, output:\n%s", statErr, out)
				}
				return
			}
			if statErr == nil {
				t.Fatal("the declined command wrote outside the sandbox")
			}
			for _, want := range []string{"[sandbox denied: write " + outside + "]", "declined to run it outside the sandbox", "[exit code: 1]"} {
				if !strings.Contains(out, want) {
					t.Fatalf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestSandboxedBashCannotReadDshData(t *testing.T) {
	home := workspace(t)
	writeFile(t, filepath.Join(home, "sessions", "log.jsonl"), "the user's history\n")
	s, svc := sandboxedSet(t, home)
	if !svc.Support().Available {
		return
	}
	ws := workspace(t)
	call := mkCall(t, "bash", newLive(t, "s1", ws), ws, map[string]any{"command": "cat " + filepath.Join(home, "sessions", "log.jsonl"), "description": "peek"})
	call.Sandbox = (&escalation{}).sandbox()
	out, err := s.exec(t, context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "the user's history") || !strings.Contains(out, "[sandbox denied: read "+filepath.Join(home, "sessions", "log.jsonl")+"]") {
		t.Fatalf("output:\n%s", out)
	}
}

// A sandboxed command is started by the sandbox's zygote, not as dsh's
// child; its process group is still dsh's to stop.
func TestSandboxedBashTimeoutAndLeftoversStopTheGroup(t *testing.T) {
	s, svc := sandboxedSet(t)
	if !svc.Support().Available {
		return // TestSandboxedBashRunsConfinedAndSaysSo covers the refusal
	}
	ws := workspace(t)
	run := func(command string, timeoutMs int) string {
		args := map[string]any{"command": command, "description": "group"}
		if timeoutMs > 0 {
			args["timeout_ms"] = timeoutMs
		}
		call := mkCall(t, "bash", newLive(t, "s1", ws), ws, args)
		call.Sandbox = (&escalation{}).sandbox()
		out, err := s.exec(t, context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := run("sleep 1000 & echo child=$!; wait", 1500)
	if !strings.Contains(got, "[timed out after 1500ms]") || !strings.Contains(got, "[sandboxed (Landlock ABI") {
		t.Errorf("output = %q", got)
	}
	waitGone(t, pidFrom(t, got))

	got = run("sleep 1000 & echo child=$!", 0)
	if !strings.Contains(got, "[background processes still writing output were stopped]") || !strings.HasSuffix(got, "[exit code: 0]") {
		t.Errorf("output = %q", got)
	}
	waitGone(t, pidFrom(t, got))

	if got := run("exit 7", 0); !strings.HasSuffix(got, "[exit code: 7]") {
		t.Errorf("output = %q", got)
	}
}
