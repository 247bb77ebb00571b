package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	sbx "github.com/seed-e9b4dba4/dsh/host/sandbox"
)

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check what this machine supports: the command sandbox of permission mode auto",
		Long: `Report the sandbox that permission mode auto runs bash commands in: the
mechanism and its version (the Landlock ABI on Linux), which protections
this machine enforces and which it cannot, what the sandbox never covers,
and the rules a command started in this folder would get. It also runs
"true" through the sandbox launcher, so a broken launcher shows here
rather than in a session. Exits 1 when commands cannot be sandboxed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			dir, err := g.workdir()
			if err != nil {
				return err
			}
			ok, err := writeDoctor(g.stdout, cfg, dir, sbx.Detect(sandboxLauncher()))
			if err != nil {
				return err
			}
			if !ok {
				return exitCodeError{code: exitError, err: fmt.Errorf("commands cannot be sandboxed on this machine; permission mode auto will ask before each one")}
			}
			return nil
		},
	}
}

// writeDoctor prints the sandbox report for commands in dir and reports
// whether commands can run sandboxed.
func writeDoctor(w io.Writer, cfg *config.Config, dir string, sb sbx.Sandbox) (bool, error) {
	var (
		sc sbx.Config
		pc permissions.Config
	)
	if err := cfg.Section(sbx.SectionPath).Decode(&sc); err != nil {
		return false, err
	}
	if err := cfg.Section(permissions.SectionPath).Decode(&pc); err != nil {
		return false, err
	}
	svc, err := sbx.NewService(sb, sc, cfg.UserHome())
	if err != nil {
		return false, err
	}
	defer svc.Close()
	sup := svc.Support()
	fmt.Fprintf(w, "permission mode: %s\n", pc.Mode)
	fmt.Fprintf(w, "command sandbox: %s\n", sup.Summary())
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintln(w, title)
		for _, it := range items {
			fmt.Fprintf(w, "  - %s\n", it)
		}
	}
	list("enforced:", sup.Enforced)
	list("not enforced on this machine:", sup.Missing)
	list("never covered:", sup.Limits)
	p := svc.Policy(dir, "$TMPDIR (a private directory per session)", compositions.DataPaths(cfg))
	list("rules for a command started in "+dir+":", p.Rules())
	if !sup.Available {
		fmt.Fprintln(w, "permission mode auto asks before every command on this machine.")
		return false, nil
	}
	probe := p
	probe.Write = []string{dir}
	// The first run starts the policy's zygote, the second reuses it.
	var took [2]time.Duration
	for i := range took {
		start := time.Now()
		if err := probeLauncher(svc, probe, dir); err != nil {
			fmt.Fprintf(w, "launcher: FAILED: %v\n", err)
			return false, nil
		}
		took[i] = time.Since(start)
	}
	fmt.Fprintf(w, "launcher: ok (true ran sandboxed in %s starting the zygote, then in %s)\n",
		took[0].Round(100*time.Microsecond), took[1].Round(100*time.Microsecond))
	return true, nil
}

// probeLauncher runs true under p.
func probeLauncher(svc *sbx.Service, p sbx.Policy, dir string) error {
	bin, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if _, err := svc.Run(cmd, p); err != nil {
		var exit *sbx.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("%v: %s", err, bytes.TrimSpace(out.Bytes()))
		}
		return err
	}
	return nil
}
