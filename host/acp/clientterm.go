package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/codingtools"
)

// A client that advertises the terminal capability runs bash commands in
// its own terminals: terminal/create (bash -c, the session's workspace, the
// environment spelled out), the terminal embedded in the tool card by its
// id, terminal/output polled at most every liveInterval while the command
// runs, terminal/wait_for_exit, terminal/kill on cancel and on the
// timeout, and terminal/release always. The model's result reads as if
// dsh had run the command.
//
// The client starts the command with its own environment plus the
// variables dsh sends: dsh sends the environment tools.bash.env lets a
// command see and blanks, by setting them empty, every variable it must
// not see (dsh's credentials first), since the protocol cannot unset one.

// Bounds of client terminals.
const (
	// maxTerminalOutput is the outputByteLimit asked of the client: the
	// most output it keeps (it drops the oldest).
	maxTerminalOutput = 1 << 20
	// terminalCallTimeout bounds each terminal request but the wait.
	terminalCallTimeout = 30 * time.Second
	// terminalKillGrace is how long a killed command may take to exit
	// before dsh stops waiting and releases the terminal, and the bound
	// of each request from the kill on (and of each poll).
	terminalKillGrace = 5 * time.Second
)

// clientTerminals is the codingtools.Runner of one call whose client runs
// commands.
type clientTerminals struct {
	conn    *sdk.AgentSideConnection
	session string
	// created hears of the terminal's id as soon as the client made it.
	created func(terminalID string)
	// poll is the interval of terminal/output; 0 means liveInterval.
	poll time.Duration
}

var _ codingtools.Runner = (*clientTerminals)(nil)

// exitOf is the answer of terminal/wait_for_exit.
type exitOf struct {
	resp sdk.WaitForTerminalExitResponse
	err  error
}

// Run runs c in a client terminal and writes its output to out as the
// polls see it grow.
func (r *clientTerminals) Run(ctx context.Context, c codingtools.Command, out io.Writer) (codingtools.RunResult, error) {
	calls := context.WithoutCancel(ctx) // kill, output and release outlive a cancelled call
	limit := maxTerminalOutput
	cwd := c.Dir
	created, err := withTimeout(calls, terminalCallTimeout, func(ctx context.Context) (sdk.CreateTerminalResponse, error) {
		return r.conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{
			SessionId:       sdk.SessionId(r.session),
			Command:         "bash",
			Args:            []string{"-c", c.Line},
			Cwd:             &cwd,
			Env:             terminalEnv(c),
			OutputByteLimit: &limit,
		})
	})
	if err != nil {
		return codingtools.RunResult{}, fmt.Errorf("the editor could not create a terminal: %v", clientReason(err))
	}
	id := created.TerminalId
	ref := sdk.TerminalOutputRequest{SessionId: sdk.SessionId(r.session), TerminalId: id}
	// After a kill, the client gets less time for each request, so a
	// stalled one cannot hold up a cancelled turn for long.
	after := terminalCallTimeout
	defer func() {
		_, _ = withTimeout(calls, after, func(ctx context.Context) (sdk.ReleaseTerminalResponse, error) {
			return r.conn.ReleaseTerminal(ctx, sdk.ReleaseTerminalRequest{SessionId: ref.SessionId, TerminalId: id})
		})
	}()
	if r.created != nil {
		r.created(id)
	}

	waitCtx, stopWait := context.WithCancel(calls)
	exited := make(chan exitOf, 1)
	go func() {
		resp, err := r.conn.WaitForTerminalExit(waitCtx, sdk.WaitForTerminalExitRequest{SessionId: ref.SessionId, TerminalId: id})
		exited <- exitOf{resp, err}
	}()
	defer func() {
		stopWait()
		<-exited // the waiting goroutine ends with Run, answered or not
	}()

	follow := &outputFollower{out: out}
	poll := r.poll
	if poll <= 0 {
		poll = liveInterval
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	timer := time.NewTimer(c.Timeout)
	defer timer.Stop()
	var (
		res  codingtools.RunResult
		exit *exitOf
	)
loop:
	for {
		select {
		case e := <-exited:
			exit = &e
			exited <- e // put back for the deferred drain
			break loop
		case <-ticker.C:
			// Bounded by the call's context: a cancel does not wait for
			// a slow poll's answer.
			if o, err := r.output(ctx, ref, terminalKillGrace); err == nil {
				follow.update(o.Output, o.Truncated)
			}
		case <-timer.C:
			res.Cause = codingtools.StopTimeout
			break loop
		case <-ctx.Done():
			res.Cause = codingtools.StopCanceled
			break loop
		}
	}
	if exit == nil {
		after = terminalKillGrace
		_, _ = withTimeout(calls, after, func(ctx context.Context) (sdk.KillTerminalResponse, error) {
			return r.conn.KillTerminal(ctx, sdk.KillTerminalRequest{SessionId: ref.SessionId, TerminalId: id})
		})
		grace := time.NewTimer(terminalKillGrace)
		select {
		case e := <-exited:
			exit = &e
			exited <- e
		case <-grace.C:
		}
		grace.Stop()
	}
	o, err := r.output(calls, ref, after)
	if err == nil {
		follow.update(o.Output, o.Truncated)
	}
	switch {
	case exit != nil && exit.err == nil:
		res.ExitCode, res.Signal = exitStatus(exit.resp.ExitCode, exit.resp.Signal)
	case err == nil && o.ExitStatus != nil:
		res.ExitCode, res.Signal = exitStatus(o.ExitStatus.ExitCode, o.ExitStatus.Signal)
	case res.Cause == codingtools.StopNone && exit != nil:
		res.ExitCode = -1
		res.Note = fmt.Sprintf("[the editor did not report how the command ended: %v]", clientReason(exit.err))
	}
	if follow.gap {
		res.Note = strings.TrimSpace(res.Note + fmt.Sprintf("\n[the editor's terminal kept only the last %d bytes of the output; earlier output is missing]", maxTerminalOutput))
	}
	return res, nil
}

func (r *clientTerminals) output(ctx context.Context, ref sdk.TerminalOutputRequest, within time.Duration) (sdk.TerminalOutputResponse, error) {
	return withTimeout(ctx, within, func(ctx context.Context) (sdk.TerminalOutputResponse, error) {
		return r.conn.TerminalOutput(ctx, ref)
	})
}

// exitStatus maps the client's exit status onto a run result's.
func exitStatus(code *int, signal *string) (int, string) {
	switch {
	case signal != nil && *signal != "":
		s := *signal
		if !strings.HasPrefix(s, "SIG") {
			s = "SIG" + s
		}
		return 0, s
	case code != nil:
		return *code, ""
	}
	return -1, ""
}

// terminalEnv is the environment sent with terminal/create: what the
// command may see, and every hidden variable set empty.
func terminalEnv(c codingtools.Command) []sdk.EnvVariable {
	out := make([]sdk.EnvVariable, 0, len(c.Env)+len(c.Hidden))
	for _, kv := range c.Env {
		name, value, ok := strings.Cut(kv, "=")
		if ok && name != "" {
			out = append(out, sdk.EnvVariable{Name: name, Value: value})
		}
	}
	for _, name := range c.Hidden {
		out = append(out, sdk.EnvVariable{Name: name, Value: ""})
	}
	return out
}

// clientReason is a client request's failure in words.
func clientReason(err error) string {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return fmt.Sprintf("%s (code %d)", re.Message, re.Code)
	}
	if err == nil {
		return "no answer"
	}
	return err.Error()
}

// withTimeout runs one request with its own deadline.
func withTimeout[T any](ctx context.Context, d time.Duration, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return fn(ctx)
}

// outputFollower turns the client's successive snapshots of a terminal's
// output into the bytes not written yet. While the client keeps all of it,
// each snapshot extends the last; once it trims the start, the new bytes
// are found after the end of the previous snapshot.
type outputFollower struct {
	out  io.Writer
	seen string
	// gap is set when output was lost between two snapshots.
	gap bool
}

// anchorLen is how much of the previous snapshot's end locates it in a
// trimmed one.
const anchorLen = 256

func (f *outputFollower) update(snap string, truncated bool) {
	if len(snap) > maxTerminalOutput {
		// More than was asked for: keep what a client honouring the
		// limit would have kept.
		snap, truncated = snap[len(snap)-maxTerminalOutput:], true
	}
	var fresh string
	switch {
	case strings.HasPrefix(snap, f.seen):
		fresh = snap[len(f.seen):]
	case truncated:
		anchor := f.seen[max(0, len(f.seen)-anchorLen):]
		if i := strings.Index(snap, anchor); i >= 0 {
			fresh = snap[i+len(anchor):]
		} else {
			f.gap = true
			fresh = "\n… [output the editor's terminal dropped] …\n" + snap
		}
	default:
		// The client's snapshot is not a continuation (it should be);
		// show what it holds now.
		fresh = "\n" + snap
	}
	f.seen = snap
	if fresh != "" {
		_, _ = io.WriteString(f.out, fresh)
	}
}
