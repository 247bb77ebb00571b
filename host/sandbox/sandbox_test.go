package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// box is a workspace with a .git, a private temp dir, a hidden dsh home and
// the sandbox of this machine.
type box struct {
	ws, tmp, home string
	sb            Sandbox
	policy        Policy
}

// newBox returns a box with the sandbox of this machine.
func newBox(t *testing.T) *box {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return newBoxWith(t, Detect(exe))
}

// eachLauncher runs test in a box of each way the sandbox starts commands
// (sandboxModes: through a zygote, through a fresh launcher).
func eachLauncher(t *testing.T, test func(t *testing.T, b *box)) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, sb := range sandboxModes(exe) {
		t.Run(name, func(t *testing.T) { test(t, newBoxWith(t, sb)) })
	}
}

func newBoxWith(t *testing.T, sb Sandbox) *box {
	t.Helper()
	t.Cleanup(func() { sb.Close() })
	root := t.TempDir()
	b := &box{ws: filepath.Join(root, "ws"), tmp: filepath.Join(root, "tmp"), home: filepath.Join(root, "dsh-home")}
	for _, d := range []string{b.ws, filepath.Join(b.ws, ".git"), filepath.Join(b.ws, "src"), b.tmp, b.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(b.ws, ".git", "config"), "[core]\n")
	write(t, filepath.Join(b.ws, "README"), "hello\n")
	write(t, filepath.Join(b.home, "session.jsonl"), "secret history\n")
	b.sb = sb
	b.policy = Policy{
		Write:    []string{b.ws, b.tmp},
		ReadOnly: []string{filepath.Join(b.ws, ".git"), filepath.Join(b.ws, ".dsh")},
		Hidden:   []string{b.home},
	}
	return b
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs script with bash -c in the workspace under p.
func (b *box) run(t *testing.T, p Policy, script string, env ...string) (string, int, Report, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	return b.runCmd(t, p, exec.Command(bash, "-c", script), env...)
}

// runCmd runs cmd in the workspace under p.
func (b *box) runCmd(t *testing.T, p Policy, cmd *exec.Cmd, env ...string) (string, int, Report, error) {
	t.Helper()
	cmd.Dir = b.ws
	cmd.Env = append(os.Environ(), append([]string{"TMPDIR=" + b.tmp}, env...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	proc, err := b.sb.Start(cmd, p)
	if err != nil {
		return "", 0, Report{}, err
	}
	ws, werr := proc.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	rep, rerr := proc.Report()
	code := ws.ExitStatus()
	if ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return out.String(), code, rep, rerr
}

func requireSandbox(t *testing.T, b *box) bool {
	t.Helper()
	sup := b.sb.Support()
	if sup.Available {
		return true
	}
	// No Landlock here: the degraded path must say so and refuse, never
	// run the command as if it were sandboxed.
	if sup.Reason == "" || !strings.Contains(sup.Summary(), "no sandbox") {
		t.Fatalf("unavailable sandbox without a reason: %+v", sup)
	}
	if _, _, _, err := b.run(t, b.policy, "true"); err == nil {
		t.Fatal("Command succeeded without a sandbox")
	}
	return false
}

func TestSandboxConfinesWrites(t *testing.T) {
	eachLauncher(t, func(t *testing.T, b *box) {
		if !requireSandbox(t, b) {
			return
		}
		userHome, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		outsideTmp, err := os.MkdirTemp("", "dsh-sandbox-outside-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(outsideTmp) })
		homeProbe := filepath.Join(userHome, fmt.Sprintf(".dsh-sandbox-probe-%d", os.Getpid()))
		t.Cleanup(func() { os.Remove(homeProbe) })

		cases := []struct {
			name, script string
			ok           bool
			unchanged    string // a file that must keep its content
			want         string
			absent       string
		}{
			{name: "workspace file", script: "echo changed > README && cat README", ok: true},
			{name: "new file in a workspace folder", script: "echo x > src/new.go && mkdir -p src/a/b && touch src/a/b/c", ok: true},
			{name: "session temp dir", script: `echo x > "$TMPDIR/scratch" && mkdir "$TMPDIR/d"`, ok: true},
			{name: ".git/config", script: "echo '[core] hooksPath=/tmp' >> .git/config", unchanged: filepath.Join(b.ws, ".git", "config"), want: "[core]\n"},
			{name: "new git hook", script: "mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit", absent: filepath.Join(b.ws, ".git", "hooks", "pre-commit")},
			{name: "remove .git/config", script: "rm -f .git/config", unchanged: filepath.Join(b.ws, ".git", "config"), want: "[core]\n"},
			// The documented price of a read-only .git: nothing new directly
			// in the workspace root.
			{name: "new file at the workspace root", script: "echo x > new.txt", absent: filepath.Join(b.ws, "new.txt")},
			{name: "/tmp outside its temp dir", script: "echo x > " + filepath.Join(outsideTmp, "x"), absent: filepath.Join(outsideTmp, "x")},
			{name: "user home", script: "echo x > " + homeProbe, absent: homeProbe},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				out, code, rep, err := b.run(t, b.policy, c.script)
				if err != nil {
					t.Fatalf("sandbox report: %v (output %q)", err, out)
				}
				if rep.Version < 1 || rep.Rules == 0 {
					t.Fatalf("report %+v does not show a ruleset", rep)
				}
				if c.ok != (code == 0) {
					t.Fatalf("exit %d, want success=%v; output:\n%s", code, c.ok, out)
				}
				if !c.ok && !deniedRe.MatchString(out) {
					t.Fatalf("denied command printed no permission error:\n%s", out)
				}
				if c.unchanged != "" {
					got, err := os.ReadFile(c.unchanged)
					if err != nil || string(got) != c.want {
						t.Fatalf("%s = %q, %v; want it unchanged", c.unchanged, got, err)
					}
				}
				if c.absent != "" {
					if _, err := os.Lstat(c.absent); err == nil {
						t.Fatalf("%s was created", c.absent)
					}
				}
			})
		}
	})
}

func TestSandboxHidesDshHome(t *testing.T) {
	eachLauncher(t, func(t *testing.T, b *box) {
		if !requireSandbox(t, b) {
			return
		}
		out, code, _, err := b.run(t, b.policy, "cat "+filepath.Join(b.home, "session.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if code == 0 || strings.Contains(out, "secret history") {
			t.Fatalf("read the dsh home: exit %d, output %q", code, out)
		}
		ds := Denials([]byte(out), b.policy, b.ws)
		if len(ds) == 0 || ds[0].Kind != "read" || ds[0].Path != filepath.Join(b.home, "session.jsonl") {
			t.Fatalf("denials = %+v, want a read of the session log", ds)
		}
		// Everything else stays readable, including the workspace's .git.
		out, code, _, err = b.run(t, b.policy, "cat .git/config /etc/hostname README >/dev/null && ls src >/dev/null && echo fine")
		if err != nil || code != 0 || !strings.Contains(out, "fine") {
			t.Fatalf("ordinary reads failed: exit %d, %v, output %q", code, err, out)
		}
	})
}

func TestSandboxNetwork(t *testing.T) {
	eachLauncher(t, func(t *testing.T, b *box) {
		if !requireSandbox(t, b) {
			return
		}
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("hello from the listener\n"))
				c.Close()
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		script := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", port)

		off := b.policy
		out, code, rep, err := b.run(t, off, script)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Version >= 4 {
			if !rep.NetworkEnforced || code == 0 || strings.Contains(out, "hello") {
				t.Fatalf("network off: exit %d, report %+v, output %q", code, rep, out)
			}
			ds := Denials([]byte(out), off, b.ws)
			if len(ds) == 0 || ds[0].Kind != "network" {
				t.Fatalf("denials = %+v, want network; output %q", ds, out)
			}
		} else if rep.NetworkEnforced {
			t.Fatalf("ABI %d cannot deny TCP, yet the report claims it: %+v", rep.Version, rep)
		}

		on := b.policy
		on.Network = true
		out, code, rep, err = b.run(t, on, script)
		if err != nil {
			t.Fatal(err)
		}
		if code != 0 || !strings.Contains(out, "hello from the listener") || rep.NetworkEnforced {
			t.Fatalf("network on: exit %d, report %+v, output %q", code, rep, out)
		}
	})
}

func TestSandboxBuildsAndTestsAGoModule(t *testing.T) {
	b := newBox(t)
	if !requireSandbox(t, b) {
		return
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to test building in the sandbox: %v", err)
	}
	cache, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gocache := strings.TrimSpace(string(cache))
	write(t, filepath.Join(b.ws, "go.mod"), "module example.com/m\n\ngo 1.21\n")
	write(t, filepath.Join(b.ws, "src", "add.go"), "package src\n\nfunc Add(a, b int) int { return a + b }\n")
	write(t, filepath.Join(b.ws, "src", "add_test.go"), "package src\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"math\")\n\t}\n}\n")
	if err := os.MkdirAll(filepath.Join(b.ws, "cmd"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(b.ws, "cmd", "main.go"), "package main\n\nimport \"example.com/m/src\"\n\nfunc main() { println(src.Add(1, 2)) }\n")
	p := b.policy
	// The build cache is the configured extra writable path a Go user adds.
	p.Write = append(p.Write, gocache)
	script := `set -e
go vet ./...
go test -count=1 ./...
go build -o cmd/m ./cmd
./cmd/m`
	out, code, _, err := b.run(t, p, script,
		"GOCACHE="+gocache, "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off",
		"GOPATH="+filepath.Join(b.tmp, "gopath"), "GOMODCACHE="+filepath.Join(b.tmp, "gopath", "pkg", "mod"))
	if err != nil || code != 0 {
		t.Fatalf("go build/test in the sandbox: exit %d, %v; output:\n%s", code, err, out)
	}
	if !strings.Contains(out, "ok  \texample.com/m/src") || !strings.Contains(out, "3") {
		t.Fatalf("unexpected output:\n%s", out)
	}
}
