package acp

import (
	"bytes"
	"context"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// While a command runs, its output streams into its tool card, for every
// client: a tool_call_update (status in_progress) whose content is the
// output's tail, fenced as console text; a client showing Zed's
// display-only terminal gets the new bytes in _meta.terminal_output
// instead. The first output goes out at once, later output at most every
// liveInterval, so a chatty command cannot flood the client. The result's
// own update follows the last live one.

// Bounds of live output.
const (
	liveInterval = 100 * time.Millisecond // at most 10 updates a second
	maxLiveTail  = 16 << 10               // bytes of output a card shows
	maxLiveChunk = 64 << 10               // new terminal bytes per update
)

// executing wraps every tool body: a call of one of the connection's
// sessions gets a live-output writer for as long as its body runs, and the
// client's file system and terminals when it offers them.
func (s *server) executing(ctx context.Context, call *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
	ss, ok := s.owns(call)
	if !ok {
		return next(ctx, call)
	}
	l := &liveOutput{ss: ss, id: call.CallID, terminal: ss.tr.isTerminal(call.CallID)}
	defer l.close()
	ctx = tools.WithLiveOutput(ctx, l)
	if read, write := s.fsRead.Load(), s.fsWrite.Load(); read || write {
		ctx = codingtools.WithFiles(ctx, &clientFiles{conn: s.conn, session: ss.id, cwd: ss.cwd, read: read, write: write, log: s.log})
	}
	if s.terminals.Load() {
		ctx = codingtools.WithRunner(ctx, &clientTerminals{conn: s.conn, session: ss.id, created: func(terminalID string) {
			// The client shows the terminal's output itself from now on;
			// a tail in the card would replace the terminal.
			l.embedded()
			ss.tr.ranInTerminal(call.CallID, terminalID)
			ss.out.Push(sdk.UpdateToolCall(sdk.ToolCallId(call.CallID),
				sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(terminalID)})))
		}})
	}
	return next(ctx, call)
}

// liveOutput is one running call's live output. Writes come from the
// command's reader goroutine, flushes from it or from the throttle's
// timer; close stops both.
type liveOutput struct {
	ss       *sess
	id       string
	terminal bool

	// now and after are the clock; nil means the real one.
	now   func() time.Time
	after func(time.Duration, func()) interface{ Stop() bool }

	mu sync.Mutex
	// quiet: the card embeds a client terminal, which shows the output.
	quiet  bool
	tail   []byte // the last maxLiveTail bytes
	fresh  []byte // terminal: bytes not sent yet, at most maxLiveChunk
	lost   bool   // terminal: fresh bytes were dropped
	dirty  bool
	sent   time.Time
	timer  interface{ Stop() bool }
	closed bool
}

func (l *liveOutput) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.quiet || len(p) == 0 {
		return len(p), nil
	}
	l.tail = appendBounded(l.tail, p, maxLiveTail)
	if l.terminal {
		if len(l.fresh)+len(p) > maxLiveChunk {
			l.lost = true
		}
		l.fresh = appendBounded(l.fresh, p, maxLiveChunk)
	}
	l.dirty = true
	if l.timer != nil {
		return len(p), nil // a flush is due
	}
	if wait := liveInterval - l.clock().Sub(l.sent); !l.sent.IsZero() && wait > 0 {
		if l.after != nil {
			l.timer = l.after(wait, l.tick)
		} else {
			l.timer = time.AfterFunc(wait, l.tick)
		}
		return len(p), nil
	}
	l.flush()
	return len(p), nil
}

// embedded stops the live output: the card now embeds a client terminal.
func (l *liveOutput) embedded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.quiet = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}

func (l *liveOutput) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	if !l.closed && l.dirty {
		l.flush()
	}
}

// flush queues one update; the caller holds l.mu.
func (l *liveOutput) flush() {
	status := sdk.ToolCallStatusInProgress
	u := sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(l.id), Status: &status}
	if l.terminal {
		data := string(l.fresh)
		if l.lost {
			data = "\n… [output skipped] …\n" + data
		}
		u.Meta = map[string]any{"terminal_output": map[string]any{"terminal_id": l.id, "data": data}}
		l.fresh, l.lost = l.fresh[:0], false
		l.ss.tr.markStreamed(l.id)
	} else {
		u.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(fence(string(lineTail(l.tail)), "console")))}
	}
	l.ss.out.Push(sdk.SessionUpdate{ToolCallUpdate: &u})
	l.dirty, l.sent = false, l.clock()
}

func (l *liveOutput) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

// close ends the live output: nothing is queued after it, so the result's
// update comes last. A terminal gets the bytes still waiting (the result
// then adds only the exit); a card's tail is replaced by the result.
func (l *liveOutput) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if l.terminal && l.dirty && !l.closed {
		l.flush()
	}
	l.closed = true
}

// appendBounded appends p to b and keeps the last limit bytes.
func appendBounded(b, p []byte, limit int) []byte {
	b = append(b, p...)
	if len(b) > limit {
		b = append(b[:0], b[len(b)-limit:]...)
	}
	return b
}

// lineTail starts a cut tail at its first full line (and rune).
func lineTail(b []byte) []byte {
	if len(b) < maxLiveTail {
		return b
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
		return b[i+1:]
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return b
}
