package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Texts of results the scheduler writes itself.
const (
	abortedBeforeDispatchText = "tool call aborted before dispatch"
	notRunText                = "tool call not run: the session log could not be written"
)

// slot is one started call of a group.
type slot struct {
	call *tools.Call
	seq  int // seq of its tool/call event
	prep *tools.Prepared
	// result is set for calls whose outcome the scheduler decided itself
	// (not run, dispatch panic); they skip Finish.
	result  *tools.Result
	settled bool
}

// runToolCalls schedules a step's tool calls (host.md §2.5): from the first
// unstarted call, a parallel-safe call opens a group of all remaining calls
// run by a rolling pool (each later call re-classified before it starts; an
// exclusive one ends the group), an exclusive call is a group of its own.
// Results are committed in model order. On cancellation or a log failure,
// started calls settle and are committed, and every unstarted call gets a
// tool/call plus an aborted result. It reports whether a result concluded
// the turn.
func (a *Agent) runToolCalls(ctx context.Context, turn, step int, blocks []session.ContentBlock) (bool, error) {
	cwd := a.live.Header().CwdOrEmpty()
	calls := make([]*tools.Call, len(blocks))
	for i, b := range blocks {
		calls[i] = &tools.Call{
			CallID:    b.ID,
			Name:      b.Name,
			Arguments: b.Arguments,
			Args:      tools.ParseArguments(b.Arguments),
			Location:  tools.Location{Turn: turn, Step: step},
			Session:   a.live,
			Cwd:       cwd,
		}
	}
	concluded := false
	for next := 0; next < len(calls); {
		parallel := a.opts.Tools.ExecutionMode(calls[next]) == tools.Parallel
		group := calls[next : next+1]
		if parallel {
			group = calls[next:]
		}
		started, c, err := a.runGroup(ctx, turn, step, group, parallel)
		concluded = concluded || c
		next += started
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err == nil && started == 0 {
			err = errors.New("tool scheduler started no call")
		}
		if err != nil {
			for _, call := range calls[next:] {
				a.skip(turn, step, call)
			}
			return concluded, err
		}
	}
	return concluded, nil
}

// runGroup runs one group and returns how many of its calls it started. It
// always waits for every dispatch it started.
func (a *Agent) runGroup(ctx context.Context, turn, step int, calls []*tools.Call, parallel bool) (started int, concluded bool, failure error) {
	limit := 1
	if parallel {
		limit = a.opts.MaxParallelToolCalls
	}
	slots := make([]slot, len(calls))
	done := make(chan int, len(calls))
	committed, inflight := 0, 0

	commit := func() {
		for committed < started && slots[committed].settled {
			s := &slots[committed]
			var res tools.Result
			if s.result != nil {
				res = *s.result
			} else {
				res = a.opts.Tools.Finish(ctx, s.prep)
			}
			if err := a.appendResult(turn, step, s.call.CallID, s.seq, res); err != nil && failure == nil {
				failure = err
			}
			a.queueSteering(res.AdditionalContexts)
			concluded = concluded || res.ConcludesTurn
			committed++
		}
	}
	fill := func() {
		for failure == nil && ctx.Err() == nil && started < len(calls) && inflight < limit {
			i := started
			if i > 0 && a.opts.Tools.ExecutionMode(calls[i]) != tools.Parallel {
				break // the pool drains; this call opens the next group
			}
			s := &slots[i]
			s.call = calls[i]
			e, err := a.live.Append(session.TypeToolCall, toolCallData(turn, step, calls[i]))
			if err != nil {
				failure = writeError(err)
				return
			}
			s.seq = e.Seq
			started++
			if a.sideEffecting(calls[i]) {
				// Durability barrier: the log up to this call is on disk
				// before anything it does to the world.
				if err := a.live.Flush(); err != nil {
					failure = writeError(err)
					s.result, s.settled = notRunResult(), true
					commit()
					return
				}
			}
			s.prep = a.opts.Tools.Prepare(ctx, calls[i])
			if s.prep.Ready() {
				inflight++
				go a.dispatch(ctx, s, i, done)
			} else {
				s.settled = true
			}
			commit()
		}
	}

	fill()
	for inflight > 0 {
		i := <-done
		inflight--
		slots[i].settled = true
		commit()
		fill()
	}
	return started, concluded, failure
}

// dispatch runs one call's tool body; it reports on done even if the
// pipeline itself panics, so the group never waits forever.
func (a *Agent) dispatch(ctx context.Context, s *slot, i int, done chan<- int) {
	defer func() {
		if v := recover(); v != nil {
			a.log.Error("tool dispatch panicked", "tool", s.call.Name, "panic", fmt.Sprint(v))
			msg := fmt.Sprintf("tool %q failed internally: %v", s.call.Name, v)
			s.result = &tools.Result{
				IsError: true,
				Content: []session.ContentBlock{session.TextBlock("Error: " + msg)},
				Error:   &tools.ErrorInfo{Message: msg, Name: tools.NamePanic, Code: tools.CodeToolPanic},
			}
		}
		done <- i
	}()
	a.opts.Tools.Dispatch(ctx, s.prep)
}

func (a *Agent) sideEffecting(call *tools.Call) bool {
	d, ok := a.opts.Tools.For(call)
	return ok && d.Effect != tools.EffectRead
}

func toolCallData(turn, step int, call *tools.Call) session.ToolCall {
	return session.ToolCall{Turn: turn, Step: step, CallID: call.CallID, Name: call.Name, Arguments: call.Arguments}
}

// appendResult commits one result as tool/result citing its tool/call.
func (a *Agent) appendResult(turn, step int, callID string, callSeq int, res tools.Result) error {
	content, cut := boundContent(res.Content, a.opts.MaxResultBytes)
	if cut {
		a.log.Warn("tool result cut to fit the session log", "call", callID, "max_bytes", a.opts.MaxResultBytes)
	}
	msg := session.Message{
		Role:    session.RoleUser,
		Content: []session.ContentBlock{session.ToolResultBlock(callID, content, res.IsError)},
		Source:  session.ToolSource(callID),
		ID:      a.opts.NewID(),
	}
	data := session.ToolResult{
		Turn:      turn,
		Step:      step,
		Message:   msg,
		Error:     tools.PersistedError(res),
		Meta:      res.Meta,
		Mutations: res.Mutations,
	}
	if _, err := a.live.Append(session.TypeToolResult, data, session.WithSources(callSeq)); err != nil {
		return writeError(err)
	}
	return nil
}

// skip records a call that was never started: its tool/call and an aborted
// result, so the history stays a valid conversation.
func (a *Agent) skip(turn, step int, call *tools.Call) {
	e, err := a.live.Append(session.TypeToolCall, toolCallData(turn, step, call))
	if err == nil {
		res := tools.Result{
			IsError: true,
			Content: []session.ContentBlock{session.TextBlock("Error: " + abortedBeforeDispatchText)},
			Error:   &tools.ErrorInfo{Message: abortedBeforeDispatchText, Name: tools.NameAbort, Code: tools.CodeAbortedBeforeDispatch},
		}
		err = a.appendResult(turn, step, call.CallID, e.Seq, res)
	}
	if err != nil {
		a.log.Error("aborted tool call not recorded", "call", call.CallID, "err", err)
	}
}

func notRunResult() *tools.Result {
	return &tools.Result{
		IsError: true,
		Content: []session.ContentBlock{session.TextBlock("Error: " + notRunText)},
		Error:   &tools.ErrorInfo{Message: notRunText, Name: "SessionWriteError", Code: CodeSessionWrite},
	}
}

// queueSteering puts messages into the next-step inbox, in order.
func (a *Agent) queueSteering(msgs []session.Message) {
	if len(msgs) == 0 {
		return
	}
	a.mu.Lock()
	a.nextStep = append(a.nextStep, msgs...)
	a.mu.Unlock()
}
