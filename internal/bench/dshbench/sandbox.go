package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/sandbox"
)

// sandboxResult is what running a command in the sandbox of permission
// mode auto costs (issue 21): true started under the default policy of a
// workspace, beside true started directly. Sandboxed is the steady state
// (the policy's zygote is running), First a session's first command (it
// starts the zygote), Launcher a fresh launcher per command (what a
// command gets when every zygote is busy).
type sandboxResult struct {
	// Unavailable says why nothing was measured.
	Unavailable string
	Version     int
	// Rules is the number of Landlock rules the sandbox built.
	Rules int
	// Sockets is set when the socket filter (seccomp) was installed.
	Sockets                          bool
	Sandboxed, First, Launcher, True latency
}

// Issue 21's target: the sandbox adds at most this to a command's start.
const targetSandboxOverhead = 5 * time.Millisecond

// sandboxDenyRead is configs/default.yaml's sandbox.deny_read.
const sandboxDenyRead = "~/.ssh:~/.gnupg:~/.aws:~/.azure:~/.config/gcloud:~/.config/gh:~/.kube:~/.docker:~/.netrc:~/.git-credentials:~/.pypirc"

func measureSandbox(ctx context.Context, bin string, n int) (sandboxResult, error) {
	var res sandboxResult
	home, err := os.UserHomeDir()
	if err != nil {
		return res, err
	}
	serviceOf := func(sb sandbox.Sandbox) (*sandbox.Service, error) {
		return sandbox.NewService(sb, sandbox.Config{DenyRead: sandboxDenyRead}, home)
	}
	service := func() (*sandbox.Service, error) { return serviceOf(sandbox.Detect(bin)) }
	svc, err := service()
	if err != nil {
		return res, err
	}
	defer svc.Close()
	if sup := svc.Support(); !sup.Available {
		res.Unavailable = sup.Reason
		return res, nil
	}
	ws, err := os.MkdirTemp("", "dshbench-sandbox-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(ws)
	for _, d := range []string{".git", "src", "tmp"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			return res, err
		}
	}
	p := svc.Policy(ws, filepath.Join(ws, "tmp"), []string{filepath.Join(home, ".dsh")})
	trueBin, err := exec.LookPath("true")
	if err != nil {
		return res, err
	}
	runIn := func(svc *sandbox.Service) error {
		cmd := exec.Command(trueBin)
		cmd.Dir = ws
		rep, err := svc.Run(cmd, p)
		res.Version, res.Rules, res.Sockets = rep.Version, rep.Rules, rep.SocketsEnforced
		return err
	}
	steady := func() error { return runIn(svc) }
	// A new service has no zygote yet: its first command starts one.
	// Stopping it is not the command's cost and is not timed.
	var stopLast func() error
	first := func() error {
		s, err := service()
		if err != nil {
			return err
		}
		stopLast = s.Close
		return runIn(s)
	}
	freshSvc, err := serviceOf(sandbox.DetectFresh(bin))
	if err != nil {
		return res, err
	}
	defer freshSvc.Close()
	launcher := func() error { return runIn(freshSvc) }
	direct := func() error {
		cmd := exec.CommandContext(ctx, trueBin)
		cmd.Dir = ws
		return cmd.Run()
	}
	// Interleaved, so load on the machine hits all alike.
	var boxed, firsts, fresh, plain []time.Duration
	for i := range n + 2 {
		for _, m := range []struct {
			fn  func() error
			out *[]time.Duration
		}{{steady, &boxed}, {first, &firsts}, {launcher, &fresh}, {direct, &plain}} {
			start := time.Now()
			err := m.fn()
			took := time.Since(start)
			if stopLast != nil {
				stopLast()
				stopLast = nil
			}
			if err != nil {
				return res, fmt.Errorf("sandbox start-up: %w", err)
			}
			if i >= 2 {
				*m.out = append(*m.out, took)
			}
		}
	}
	res.Sandboxed, res.First, res.Launcher, res.True = percentiles(boxed), percentiles(firsts), percentiles(fresh), percentiles(plain)
	return res, nil
}

func (s sandboxResult) rows(row func(...string)) {
	if s.Unavailable != "" {
		row("sandboxed command start-up (zygote + Landlock + true)", "not measured", s.Unavailable, "", "")
		return
	}
	filter := ""
	if s.Sockets {
		filter = ", socket filter"
	}
	row(fmt.Sprintf("sandboxed start-up, steady: zygote, Landlock ABI %d, %d rules%s, true", s.Version, s.Rules, filter),
		pp(s.Sandboxed), "true "+pp(s.True), "+"+ms(s.Sandboxed.P50-s.True.P50), "")
	row("sandboxed start-up, a session's first (starts its zygote)",
		pp(s.First), "true "+pp(s.True), "+"+ms(s.First.P50-s.True.P50), "")
	row("sandboxed start-up, fresh launcher (when all zygotes are busy)",
		pp(s.Launcher), "true "+pp(s.True), "+"+ms(s.Launcher.P50-s.True.P50), "")
}

func (s sandboxResult) targets(row func(...string)) {
	if s.Unavailable != "" {
		row("sandbox start-up ≤ 5 ms over true (issue 21)", "not measured", "", "n/a", "")
		return
	}
	extra := s.Sandboxed.P50 - s.True.P50
	row("sandbox start-up ≤ 5 ms over true (issue 21, steady)", "+"+ms(extra), "", verdict(extra <= targetSandboxOverhead), "")
}
