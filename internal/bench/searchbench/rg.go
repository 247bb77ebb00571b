package main

import (
	"context"
	"errors"
	"os/exec"
)

func lookRG() (string, error) { return exec.LookPath("rg") }

// runRG counts matching lines per file, fixed-string, as a user would grep
// the logs; exit status 1 only means "no match".
func runRG(ctx context.Context, rg, q, root string) error {
	cmd := exec.CommandContext(ctx, rg, "-c", "-F", "--no-messages", q, root)
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return nil
	}
	return err
}
