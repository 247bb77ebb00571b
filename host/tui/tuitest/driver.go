package tuitest

import (
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

// DefaultLimit is a Driver's Limit unless the test sets another.
const DefaultLimit = 15 * time.Second

// Outcome is what the UI's run function returned.
type Outcome[R any] struct {
	Res R
	Err error
}

// Screen is a simulation screen that keeps W×H across Init, which tview
// calls when it takes the screen. Set W and H before the UI starts.
type Screen struct {
	tcell.SimulationScreen
	W, H int
}

// Init initializes the screen at its size.
func (s *Screen) Init() error {
	if err := s.SimulationScreen.Init(); err != nil {
		return err
	}
	s.SetSize(s.W, s.H)
	return nil
}

// Driver runs one UI whose run function returns R.
type Driver[R any] struct {
	t testing.TB
	// Screen is the screen to hand the UI.
	Screen *Screen
	// Limit bounds every wait (DefaultLimit).
	Limit  time.Duration
	frames chan string
	last   string
	done   chan Outcome[R]
}

// New returns a driver with a w×h screen. Hand the UI d.Screen and
// d.AfterDraw, then call Start.
func New[R any](t testing.TB, w, h int) *Driver[R] {
	return &Driver[R]{
		t:      t,
		Screen: &Screen{SimulationScreen: tcell.NewSimulationScreen("UTF-8"), W: w, H: h},
		Limit:  DefaultLimit,
		frames: make(chan string, 1),
		done:   make(chan Outcome[R], 1),
	}
}

// AfterDraw records the frame just drawn; only the newest unread one is
// kept.
func (d *Driver[R]) AfterDraw(s tcell.Screen) {
	text := Text(s)
	select {
	case <-d.frames:
	default:
	}
	d.frames <- text
}

// Start runs the UI in a goroutine; its outcome is what Exit and Done
// return.
func (d *Driver[R]) Start(run func() (R, error)) {
	go func() {
		res, err := run()
		d.done <- Outcome[R]{res, err}
	}()
}

// Done delivers the UI's outcome once it returned (once).
func (d *Driver[R]) Done() <-chan Outcome[R] { return d.done }

// Last is the newest frame a wait read.
func (d *Driver[R]) Last() string { return d.last }

// WaitFor waits for a frame satisfying ok and returns it; what names it in
// the failure.
func (d *Driver[R]) WaitFor(what string, ok func(screen string) bool) string {
	d.t.Helper()
	if d.last != "" && ok(d.last) {
		return d.last
	}
	deadline := time.NewTimer(d.Limit)
	defer deadline.Stop()
	for {
		select {
		case f := <-d.frames:
			d.last = f
			if ok(f) {
				return f
			}
		case out := <-d.done:
			d.t.Fatalf("waiting for %s: the UI exited (%v); last screen:\n%s", what, out.Err, d.last)
		case <-deadline.C:
			d.t.Fatalf("waiting for %s: not shown; last screen:\n%s", what, d.last)
		}
	}
}

// WaitText waits until every text is on screen.
func (d *Driver[R]) WaitText(texts ...string) string {
	d.t.Helper()
	return d.WaitFor(strings.Join(texts, " + "), func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	})
}

// WaitGone waits until text is no longer on screen.
func (d *Driver[R]) WaitGone(text string) string {
	d.t.Helper()
	return d.WaitFor("no "+text, func(s string) bool { return !strings.Contains(s, text) })
}

// Key presses k.
func (d *Driver[R]) Key(k tcell.Key) { d.Screen.InjectKey(k, 0, tcell.ModNone) }

// KeyMod presses k (or rune r) with modifiers m.
func (d *Driver[R]) KeyMod(k tcell.Key, r rune, m tcell.ModMask) { d.Screen.InjectKey(k, r, m) }

// Type types s.
func (d *Driver[R]) Type(s string) {
	for _, r := range s {
		d.Screen.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
}

// Submit types s and presses Enter.
func (d *Driver[R]) Submit(s string) {
	d.Type(s)
	d.Key(tcell.KeyEnter)
}

// Exit presses Ctrl+C twice and returns the UI's outcome, which Done
// still delivers afterwards.
func (d *Driver[R]) Exit() Outcome[R] {
	d.t.Helper()
	d.KeyMod(tcell.KeyCtrlC, 0, tcell.ModCtrl)
	d.KeyMod(tcell.KeyCtrlC, 0, tcell.ModCtrl)
	select {
	case out := <-d.done:
		d.done <- out
		return out
	case <-time.After(d.Limit):
		d.t.Fatalf("Ctrl+C twice did not exit; last screen:\n%s", d.last)
		return Outcome[R]{}
	}
}

// Text reads the screen's contents row by row, each row without its
// trailing spaces; a wide character counts once.
func Text(s tcell.Screen) string {
	w, h := s.Size()
	var b strings.Builder
	for y := 0; y < h; y++ {
		var row strings.Builder
		for x := 0; x < w; x++ {
			str, _, width := s.Get(x, y)
			if str == "" {
				str = " "
			}
			row.WriteString(str)
			if width > 1 {
				x += width - 1
			}
		}
		b.WriteString(strings.TrimRight(row.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}
