package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Output formats of dsh run.
const (
	formatText       = "text"        // the final answer
	formatJSON       = "json"        // one result object
	formatStreamJSON = "stream-json" // every session event, then the result
)

var runFormats = []string{formatText, formatJSON, formatStreamJSON}

// runReport is the final object of dsh run --json (and the last line of
// stream-json).
type runReport struct {
	Type      string `json:"type"` // always "result"
	SessionID string `json:"sessionId"`
	// Completed is true when the turn ended "completed" and no tool call
	// was denied: exactly when dsh run exits 0.
	Completed bool                  `json:"completed"`
	Result    string                `json:"result"`
	End       session.TurnEndReason `json:"end"`
	Denied    []deniedCall          `json:"deniedToolCalls"`
	Retries   int                   `json:"retries"`
	StartedAt string                `json:"startedAt"`
	EndedAt   string                `json:"endedAt"`
}

// deniedCall is a tool call the permission policy refused.
type deniedCall struct {
	CallID    string `json:"callId"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	Reason    string `json:"reason"`
}

// runObserver turns a headless session's events into what dsh run shows
// while it works: a stderr line per denied tool call and per retry, and in
// stream-json every event on stdout. Its methods are called from the
// session's appending goroutine.
type runObserver struct {
	stdout, stderr io.Writer
	format         string

	mu      sync.Mutex
	calls   map[string]session.ToolCall
	denied  []deniedCall
	retries int
	err     error // the first stdout write failure
}

func newRunObserver(stdout, stderr io.Writer, format string) *runObserver {
	return &runObserver{stdout: stdout, stderr: stderr, format: format, calls: map[string]session.ToolCall{}}
}

func (o *runObserver) started(id string) {
	fmt.Fprintf(o.stderr, "dsh: session %s\n", termtext.Line(id))
}

func (o *runObserver) observe(e session.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.format == formatStreamJSON && o.err == nil {
		if b, err := session.Marshal(e); err != nil {
			o.err = err
		} else if _, err := fmt.Fprintf(o.stdout, "%s\n", b); err != nil {
			o.err = err
		}
	}
	switch e.Type {
	case session.TypeToolCall:
		var c session.ToolCall
		if e.DecodeData(&c) == nil {
			o.calls[c.CallID] = c
		}
	case session.TypeToolResult:
		var r session.ToolResult
		if e.DecodeData(&r) != nil || r.Error == nil || r.Error.Code != tools.CodeDenied {
			return
		}
		d := deniedCall{}
		for _, b := range r.Message.Content {
			d.CallID = b.ToolCallID
			for _, c := range b.Content {
				d.Reason += c.Text
			}
		}
		c := o.calls[d.CallID]
		d.Tool, d.Arguments = c.Name, c.Arguments
		o.denied = append(o.denied, d)
		fmt.Fprintf(o.stderr, "dsh: denied %s %s: %s\n", termtext.Line(d.Tool), oneLine(d.Arguments, 120), oneLine(d.Reason, 200))
	case session.TypeLLMRetry:
		var r session.LLMRetry
		if e.DecodeData(&r) != nil {
			return
		}
		o.retries++
		of := ""
		if r.MaxRetries > 0 {
			of = fmt.Sprintf(" of %d", r.MaxRetries)
		}
		fmt.Fprintf(o.stderr, "dsh: the model request failed: %s (%s); retry %d%s in %s\n",
			oneLine(r.Failure.Message, 200), termtext.Line(r.Failure.Code), r.Retry, of, time.Duration(r.DelayMs)*time.Millisecond)
	}
}

// deniedCalls returns the denied calls so far.
func (o *runObserver) deniedCalls() []deniedCall {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]deniedCall{}, o.denied...)
}

func (o *runObserver) retryCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.retries
}

func (o *runObserver) writeErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// rfc3339 is the one time format of dsh's JSON output: RFC 3339 in UTC with
// milliseconds.
func rfc3339(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func validFormat(f string) bool {
	for _, v := range runFormats {
		if f == v {
			return true
		}
	}
	return false
}

func formatList() string { return strings.Join(runFormats, ", ") }
