package tui

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// viewFixture draws a transcript view on a simulation screen.
type viewFixture struct {
	t      *transcript
	v      *transcriptView
	screen tcell.SimulationScreen
	mode   viewMode
}

func newViewFixture(tb testing.TB, h session.Header, events []session.Event, w, hgt int) *viewFixture {
	tb.Helper()
	f := &viewFixture{screen: tcell.NewSimulationScreen("UTF-8"), mode: viewMode{showReasoning: true, maxToolLines: 6}}
	if err := f.screen.Init(); err != nil {
		tb.Fatal(err)
	}
	f.screen.SetSize(w, hgt)
	f.t = newTranscript(h, nil)
	f.t.load(events)
	f.v = newTranscriptView(f.t, newTheme(true), &f.mode)
	f.v.SetRect(0, 0, w, hgt)
	f.draw()
	return f
}

func (f *viewFixture) draw() string {
	f.screen.Clear()
	f.v.Draw(f.screen)
	return screenText(f.screen)
}

// laidOut counts the entries whose layout was computed.
func (f *viewFixture) laidOut() int {
	n := 0
	for _, e := range f.t.entries {
		if e.lines != nil {
			n++
		}
	}
	return n
}

func TestATenThousandEventSessionLaysOutOnlyWhatIsVisible(t *testing.T) {
	h, events := genSession(t, 10_000)
	f := newViewFixture(t, h, events, 100, 40)
	if len(f.t.entries) < 900 {
		t.Fatalf("only %d entries from %d events", len(f.t.entries), len(events))
	}
	screen := f.draw()
	last := f.t.stats.turn
	if !strings.Contains(screen, "Fixed the bug in turn "+strconv.Itoa(last)) {
		t.Fatalf("the end of the session is not shown:\n%s", screen)
	}
	if n := f.laidOut(); n > 20 {
		t.Errorf("opening laid out %d of %d entries; it must lay out only the visible ones", n, len(f.t.entries))
	}
	for range 20 {
		f.v.page(-1)
		f.draw()
	}
	if n := f.laidOut(); n > 300 {
		t.Errorf("20 pages up laid out %d entries", n)
	}
	f.v.toTop()
	screen = f.draw()
	if !strings.Contains(screen, "Request 1: please look at file_1.go") {
		t.Errorf("top of the session not shown:\n%s", screen)
	}
	f.v.toBottom()
	if screen = f.draw(); !strings.Contains(screen, "Fixed the bug in turn "+strconv.Itoa(last)) {
		t.Errorf("bottom not shown again:\n%s", screen)
	}
}

func TestScrolledUpViewKeepsItsPlaceWhileOutputStreams(t *testing.T) {
	h, events := genSession(t, 300)
	f := newViewFixture(t, h, events, 80, 20)
	f.v.page(-1)
	before := f.draw()
	if f.v.follow {
		t.Fatal("paging up still follows the bottom")
	}
	live := session.NewLive(h, events, session.LiveOptions{})
	turn := f.t.stats.turn + 1
	appendEvent := func(typ string, data any) {
		e, err := live.Append(typ, data)
		if err != nil {
			t.Fatal(err)
		}
		f.t.apply(e, true)
	}
	appendEvent(session.TypeTurnStart, session.TurnStart{Turn: turn})
	appendEvent(session.TypeUserMessage, session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock("new prompt")}, Source: session.UserSource, ID: "x"})
	if after := f.draw(); after != before {
		t.Errorf("the view moved while scrolled up:\nbefore\n%s\nafter\n%s", before, after)
	}
	f.v.page(1)
	f.v.page(1)
	if !f.v.follow {
		t.Fatal("paging back down did not resume following")
	}
	if screen := f.draw(); !strings.Contains(screen, "› new prompt") {
		t.Errorf("following view does not show new output:\n%s", screen)
	}
}

func BenchmarkOpenTenThousandEventSession(b *testing.B) {
	h, events := genSession(b, 10_000)
	screen := tcell.NewSimulationScreen("UTF-8")
	if err := screen.Init(); err != nil {
		b.Fatal(err)
	}
	screen.SetSize(120, 40)
	mode := viewMode{showReasoning: true, maxToolLines: 6}
	th := newTheme(true)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t := newTranscript(h, nil)
		t.load(events)
		v := newTranscriptView(t, th, &mode)
		v.SetRect(0, 0, 120, 40)
		v.Draw(screen)
	}
}

func BenchmarkScrollTenThousandEventSession(b *testing.B) {
	h, events := genSession(b, 10_000)
	screen := tcell.NewSimulationScreen("UTF-8")
	if err := screen.Init(); err != nil {
		b.Fatal(err)
	}
	screen.SetSize(120, 40)
	mode := viewMode{showReasoning: true, maxToolLines: 6}
	t := newTranscript(h, nil)
	t.load(events)
	v := newTranscriptView(t, newTheme(true), &mode)
	v.SetRect(0, 0, 120, 40)
	v.Draw(screen)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%200 == 0 {
			v.toBottom()
		}
		v.page(-1)
		v.Draw(screen)
	}
}

func TestANarrowStatusLineKeepsTheModelAndThePermissionMode(t *testing.T) {
	for _, size := range []struct {
		w, h  int
		model string
	}{{80, 24, "a-rather-long-model-identifier-v4"}, {50, 24, "deepseek-v4-pro"}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			p := newScripted(heldReply("Working on it"))
			b := newBackend(t, p)
			d := startUI(t, b, func(o *Options) {
				s := o.Screen.(*sizedScreen)
				s.W, s.H = size.w, size.h
			})
			d.submit("/model " + size.model)
			d.waitText("model: " + size.model)
			d.submit("start working")
			<-p.holding
			screen := d.waitText("Working on it", "● responding")
			status := row(screen, -1)
			if !strings.Contains(status, size.model) || !strings.Contains(status, "default") || !strings.Contains(status, "● responding") {
				t.Errorf("status line %q lost the model, the mode or the phase", status)
			}
			d.key(tcell.KeyEscape)
			d.waitText("○ ready")
			d.exit()
		})
	}
}
