package tui

import (
	"fmt"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// phase is what a running turn is doing, for the status line.
type phase uint8

const (
	phaseIdle phase = iota
	phaseWaiting
	phaseThinking
	phaseResponding
	phaseTools
	phaseApproval
	phaseCompacting
)

func (p phase) String() string {
	switch p {
	case phaseWaiting:
		return "waiting for the model"
	case phaseThinking:
		return "thinking"
	case phaseResponding:
		return "responding"
	case phaseTools:
		return "running tools"
	case phaseApproval:
		return "waiting for your approval"
	case phaseCompacting:
		return "compacting"
	default:
		return "ready"
	}
}

// stats are the status-line facts folded from the log.
type stats struct {
	provider, model, effort string
	window                  int
	turn, step              int

	// Session totals. input excludes cache reads (session.Usage is disjoint).
	input, output, cacheRead int
	// lastContext is the size of the latest request plus its reply: how
	// much of the window the conversation uses now.
	lastContext int

	phase        phase
	phaseSince   int64 // Unix ms of the event that entered the phase
	toolsRunning int
	// asking counts the calls waiting for the user's approval.
	asking int
}

func (s *stats) setPhase(p phase, at int64) {
	if s.phase != p {
		s.phase, s.phaseSince = p, at
	}
}

// addUsage adds one model call's usage; a conversation call also sets the
// current context size.
func (s *stats) addUsage(u session.Usage, conversation bool) {
	s.input += u.InputTokens
	s.output += u.OutputTokens
	s.cacheRead += u.CacheReadTokens
	if conversation {
		s.lastContext = u.InputTokens + u.CacheReadTokens + u.OutputTokens
	}
}

// cacheRate is the share of billed input served from the cache.
func (s *stats) cacheRate() (int, bool) {
	total := s.input + s.cacheRead
	if total == 0 {
		return 0, false
	}
	return s.cacheRead * 100 / total, true
}

// tokens formats a token count compactly: 950, 12.3k, 1.2M.
func tokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 100_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// age formats how long ago t was, for pickers.
func age(now time.Time, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	default:
		return t.Format("2006-01-02")
	}
}

// byteSize formats a size in bytes: 512 B, 12 KB, 3.4 MB.
func byteSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%d KB", (n+1023)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

// plural counts things: "1 session", "3 sessions".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
