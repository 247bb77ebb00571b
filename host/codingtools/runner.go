package codingtools

import (
	"context"
	"io"
	"time"
)

// Runner runs the bash tool's commands. The local runner (a process group
// of dsh's own, see process.go) is the default; a front end whose client
// runs commands itself (an ACP editor's terminals) installs another for the
// calls of its sessions with WithRunner. The bash tool renders whatever
// runner ran the command the same way.
type Runner interface {
	// Run runs c and writes its output (stdout and stderr merged, in the
	// order written) to out as it arrives, from one goroutine at a time. It
	// returns when the command and everything it started that still held
	// the output are gone, or were stopped: at c.Timeout, or when ctx ends.
	// An error means the command could not be started; out then received
	// nothing.
	Run(ctx context.Context, c Command, out io.Writer) (RunResult, error)
}

// Command is one bash call's command.
type Command struct {
	// Line is the command line, run with bash -c.
	Line string
	// Dir is the absolute working directory.
	Dir string
	// Env is the command's whole environment ("NAME=value"), already
	// filtered by tools.bash.env; never nil.
	Env []string
	// Hidden names the variables the command must not see: dsh's
	// credentials, the configured hidden names and every variable of dsh's
	// environment the filter removed. A runner whose command inherits
	// another environment (an editor's) blanks them there.
	Hidden []string
	// Timeout stops the command.
	Timeout time.Duration
}

// StopCause is how a run ended, beyond the command's own exit status.
type StopCause int

const (
	// StopNone: the command ended on its own.
	StopNone StopCause = iota
	// StopTimeout: Command.Timeout fired and the command was stopped.
	StopTimeout
	// StopCanceled: the call's context ended and the command was stopped.
	StopCanceled
)

// RunResult is everything the bash result is rendered from.
type RunResult struct {
	// ExitCode is the shell's exit status, when Signal is empty.
	ExitCode int
	// Signal names the signal the shell died of ("SIGKILL"), if any.
	Signal string
	Cause  StopCause
	// Leftovers is set when background processes kept the output open
	// after the shell exited and were stopped.
	Leftovers bool
	// Detached is set when something outside the command's process group
	// still held the output after everything in it was killed; reading
	// stopped there.
	Detached bool
	// Note, when set, is a line the result shows above the output (what a
	// runner wants the model to know, e.g. that its client trimmed the
	// output).
	Note string
}

type runnerKey struct{}

// WithRunner returns ctx carrying r as the runner of the bash call whose
// body runs with ctx. Front ends install it through an Execute wrapper.
func WithRunner(ctx context.Context, r Runner) context.Context {
	return context.WithValue(ctx, runnerKey{}, r)
}

// runnerFrom returns the runner installed on ctx, or nil.
func runnerFrom(ctx context.Context) Runner {
	r, _ := ctx.Value(runnerKey{}).(Runner)
	return r
}
