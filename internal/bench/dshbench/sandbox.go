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
// mode auto costs (issue 21): true started through the dsh launcher under
// the default policy of a workspace, beside true started directly.
type sandboxResult struct {
	// Unavailable says why nothing was measured.
	Unavailable string
	Version     int
	// Rules is the number of Landlock rules the launcher built.
	Rules           int
	Sandboxed, True latency
}

// Issue 21's target: the launcher adds at most this to a command's start.
const targetSandboxOverhead = 5 * time.Millisecond

// sandboxDenyRead is configs/default.yaml's sandbox.deny_read.
const sandboxDenyRead = "~/.ssh:~/.gnupg:~/.aws:~/.azure:~/.config/gcloud:~/.config/gh:~/.kube:~/.docker:~/.netrc:~/.git-credentials:~/.pypirc"

func measureSandbox(ctx context.Context, bin string, n int) (sandboxResult, error) {
	var res sandboxResult
	home, err := os.UserHomeDir()
	if err != nil {
		return res, err
	}
	svc, err := sandbox.NewService(sandbox.Detect(bin), sandbox.Config{DenyRead: sandboxDenyRead}, home)
	if err != nil {
		return res, err
	}
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
	sandboxed := func() error {
		cmd := exec.CommandContext(ctx, trueBin)
		cmd.Dir = ws
		rep, err := svc.Run(cmd, p)
		res.Version, res.Rules = rep.Version, rep.Rules
		return err
	}
	direct := func() error {
		cmd := exec.CommandContext(ctx, trueBin)
		cmd.Dir = ws
		return cmd.Run()
	}
	// Interleaved, so load on the machine hits both alike.
	var boxed, plain []time.Duration
	for i := range n + 2 {
		for _, m := range []struct {
			fn  func() error
			out *[]time.Duration
		}{{sandboxed, &boxed}, {direct, &plain}} {
			start := time.Now()
			if err := m.fn(); err != nil {
				return res, fmt.Errorf("sandbox start-up: %w", err)
			}
			if i >= 2 {
				*m.out = append(*m.out, time.Since(start))
			}
		}
	}
	res.Sandboxed, res.True = percentiles(boxed), percentiles(plain)
	return res, nil
}

func (s sandboxResult) rows(row func(...string)) {
	if s.Unavailable != "" {
		row("sandboxed command start-up (launcher + Landlock + true)", "not measured", s.Unavailable, "", "")
		return
	}
	row(fmt.Sprintf("sandboxed command start-up (launcher + Landlock ABI %d, %d rules, + true)", s.Version, s.Rules),
		pp(s.Sandboxed), "true "+pp(s.True), "+"+ms(s.Sandboxed.P50-s.True.P50), "")
}

func (s sandboxResult) targets(row func(...string)) {
	if s.Unavailable != "" {
		row("sandbox start-up ≤ 5 ms over true (issue 21)", "not measured", "", "n/a", "")
		return
	}
	extra := s.Sandboxed.P50 - s.True.P50
	row("sandbox start-up ≤ 5 ms over true (issue 21)", "+"+ms(extra), "", verdict(extra <= targetSandboxOverhead), "")
}
