package codingtools

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func (s *Set) bashDescription() string {
	return fmt.Sprintf("Run a shell command with `bash -c` in the working directory. Every call starts a fresh shell: no state (cd, variables) carries over, stdin is empty, and there is no terminal. "+
		"stdout and stderr are merged in the order they were written. The result ends with markers: [exit code: N], [timed out after Nms], or [killed by signal: S]; empty output shows as (no output). "+
		"Output longer than %d bytes keeps only its end and names a file holding the output, up to its first %s (the result says when more was not saved). "+
		"The command is stopped (its whole process group) after timeout_ms, %d by default and at most %d. "+
		"Background processes that still write to the output when the command ends are stopped too; redirect their output to a file to keep them running.",
		s.cfg.Bash.MaxOutputBytes, byteSize(int64(s.cfg.Bash.SavedOutput.MaxBytes)), s.cfg.Bash.DefaultTimeoutMs, s.cfg.Bash.MaxTimeoutMs)
}

type bashArgs struct {
	Command     string `json:"command"`
	Description string `json:"description"`
	TimeoutMs   optInt `json:"timeout_ms"`
}

func (s *Set) bashTool() *tools.Definition {
	return &tools.Definition{
		Name:        "bash",
		Description: s.bashDescription(),
		Parameters: tools.Object(
			tools.Req("command", tools.String("The command line to run.")),
			tools.Req("description", tools.String("A short description of what the command does, in a few words, shown to the user.")),
			tools.Field("timeout_ms", tools.Integer(fmt.Sprintf("Timeout in milliseconds, at most %d. Defaults to %d.", s.cfg.Bash.MaxTimeoutMs, s.cfg.Bash.DefaultTimeoutMs))),
		),
		Output:    tools.StringOutput,
		Effect:    tools.EffectExecute,
		Sandboxed: true,
		Execute:   s.bash,
		PresentCall: func(call *tools.Call) *tools.CallView {
			var a bashArgs
			_ = decodeArgs(nameBash, call, &a)
			title := strings.TrimSpace(a.Description)
			if title == "" {
				title = firstLine(a.Command, 80)
			}
			return &tools.CallView{Kind: tools.KindExecute, Title: title, RawInput: rawInput(call)}
		},
	}
}

func (s *Set) bash(ctx context.Context, call *tools.Call) (any, error) {
	var a bashArgs
	if err := decodeArgs(nameBash, call, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return nil, failf(nameBash, CodeInvalidArgs, "command is empty")
	}
	timeout, err := s.bashTimeout(a.TimeoutMs)
	if err != nil {
		return nil, err
	}
	if call.Cwd == "" {
		return nil, failf(nameBash, CodeNoWorkspace, "this session has no working directory to run commands in")
	}
	environ := os.Environ()
	c := Command{Line: a.Command, Dir: call.Cwd, Env: s.env.apply(environ), Hidden: s.env.removed(environ), Timeout: timeout}
	if call.Sandbox != nil {
		return s.sandboxedBash(ctx, call, c)
	}
	out, res, err := s.runBash(ctx, call, c, s.runnerFor(ctx))
	if err != nil {
		return nil, err
	}
	return renderBash(out, res, timeout), nil
}

// runBash runs c once with r, collecting its output.
func (s *Set) runBash(ctx context.Context, call *tools.Call, c Command, r Runner) (*tailCollector, RunResult, error) {
	out := &tailCollector{limit: s.cfg.Bash.MaxOutputBytes, maxSaved: int64(s.cfg.Bash.SavedOutput.MaxBytes), store: s.outputs, session: sessionKey(call)}
	var sink io.Writer = out
	if live := tools.LiveOutput(ctx); live != nil {
		sink = io.MultiWriter(out, liveWriter{live})
	}
	res, err := r.Run(ctx, c, sink)
	if err != nil {
		return nil, res, failf(nameBash, CodeStartFailed, "cannot start bash in %s: %v", call.Cwd, err)
	}
	return out, res, nil
}

// runnerFor is the runner of a call running with ctx: the front end's, or the
// local one.
func (s *Set) runnerFor(ctx context.Context) Runner {
	if r := runnerFrom(ctx); r != nil {
		return r
	}
	return s.localRunner()
}

// localRunner runs commands in process groups of dsh's own.
func (s *Set) localRunner() runner {
	return runner{shell: "bash", grace: ms(s.cfg.Bash.KillGraceMs), groups: s.groups}
}

// bashTimeout clamps a requested timeout to [1, max]; a non-positive request
// is an error rather than "no timeout".
func (s *Set) bashTimeout(req optInt) (time.Duration, error) {
	if !req.set {
		return ms(s.cfg.Bash.DefaultTimeoutMs), nil
	}
	if req.v < 1 {
		return 0, failf(nameBash, CodeInvalidArgs, "timeout_ms must be a positive number of milliseconds (got %d); omit it for the default of %d", req.v, s.cfg.Bash.DefaultTimeoutMs)
	}
	return ms(int(min(req.v, int64(s.cfg.Bash.MaxTimeoutMs)))), nil
}

// renderBash renders a run; notes (the sandbox's) go just before the
// closing marker.
func renderBash(out *tailCollector, res RunResult, timeout time.Duration, notes ...string) string {
	text, _, note := out.finish()
	var b strings.Builder
	for _, n := range []string{res.Note, note} {
		if n != "" {
			b.WriteString(n)
			b.WriteByte('\n')
		}
	}
	if len(text) == 0 {
		b.WriteString("(no output)\n")
	} else {
		b.Write(text)
		if text[len(text)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	if res.Leftovers {
		b.WriteString("[background processes still writing output were stopped]\n")
	}
	if res.Detached {
		b.WriteString("[a detached process still holds the output; reading stopped]\n")
	}
	for _, n := range notes {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	switch {
	case res.Cause == StopTimeout:
		fmt.Fprintf(&b, "[timed out after %dms]", timeout.Milliseconds())
	case res.Cause == StopCanceled:
		b.WriteString("[cancelled: the command was stopped]")
	case res.Signal != "":
		fmt.Fprintf(&b, "[killed by signal: %s]", res.Signal)
	default:
		fmt.Fprintf(&b, "[exit code: %d]", res.ExitCode)
	}
	return b.String()
}

func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return sig.String()
}

func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > max {
		s = string(trimPartialRune([]byte(s[:max]))) + "…"
	}
	return s
}

// liveWriter tees into a front end's live output; its failure never stops
// the command or the collector.
type liveWriter struct{ w io.Writer }

func (l liveWriter) Write(p []byte) (int, error) {
	_, _ = l.w.Write(p)
	return len(p), nil
}
