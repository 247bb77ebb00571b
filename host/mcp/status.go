package mcp

import (
	"fmt"
	"strings"
)

// State is where a server is in its life.
type State string

// Server states.
const (
	// StateStarting: the process or connection is coming up and its tools
	// are being listed.
	StateStarting State = "starting"
	// StateReady: its tools are registered.
	StateReady State = "ready"
	// StateCrashed: it exited after starting; its tools stay listed and the
	// next call restarts it (once).
	StateCrashed State = "crashed"
	// StateFailed: it could not start, or crashed again after its restart;
	// it has no tools in this session.
	StateFailed State = "failed"
	// StateClosed: the session closed it.
	StateClosed State = "closed"
)

// Status is a snapshot of one server.
type Status struct {
	// Session is the session the server belongs to.
	Session   string
	Name      string
	Transport string
	State     State
	// Tools is the number of its tools registered now.
	Tools int
	// Error says why it failed or crashed; empty otherwise.
	Error string
	// Stderr is the tail of a stdio server's stderr, for failures.
	Stderr string
	// Restarted is set once its one restart was used.
	Restarted bool
}

// Message is the line a front end shows for s, e.g. "MCP server github
// failed to start: ... (stderr: ...)".
func (s Status) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %s", s.Name)
	switch s.State {
	case StateReady:
		fmt.Fprintf(&b, " is ready with %d tool%s", s.Tools, plural(s.Tools))
		if s.Restarted {
			b.WriteString(" after a restart")
		}
	case StateStarting:
		b.WriteString(" is starting")
	case StateCrashed:
		fmt.Fprintf(&b, " stopped: %s; it will be restarted on the next call of one of its tools", s.Error)
	case StateFailed:
		fmt.Fprintf(&b, " failed: %s; the session goes on without its tools", s.Error)
	case StateClosed:
		b.WriteString(" was closed")
	}
	if s.Stderr != "" && (s.State == StateFailed || s.State == StateCrashed) {
		fmt.Fprintf(&b, " (stderr: %s)", oneLine(s.Stderr, 600))
	}
	return b.String()
}

// Problem reports whether s is a state a user should be told about.
func (s Status) Problem() bool { return s.State == StateFailed || s.State == StateCrashed }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// oneLine joins lines with " | " and keeps the last max bytes, where the
// useful end of a stack trace or error is.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
	if len(s) > max {
		cut := len(s) - max
		for cut < len(s) && !utf8Start(s[cut]) {
			cut++
		}
		s = "…" + s[cut:]
	}
	return s
}
