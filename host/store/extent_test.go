package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestExtentEncodingRoundTrips(t *testing.T) {
	for _, x := range []Extent{{}, {Dev: 1 << 40, Ino: 77, Bytes: 1 << 33, Events: 123456, Tail: 1<<64 - 1, Open: true}, {Recovered: true}} {
		got, ok := DecodeExtent(x.Encode())
		if !ok || got != x {
			t.Errorf("DecodeExtent(Encode(%+v)) = %+v, %v", x, got, ok)
		}
	}
	for _, b := range [][]byte{nil, {0}, {extentVersion}, append(Extent{}.Encode(), 0)} {
		if _, ok := DecodeExtent(b); ok {
			t.Errorf("DecodeExtent(%v) accepted", b)
		}
	}
}

// ReadAppended returns exactly the events a whole read adds after the
// extent, and an extent equal to a whole read's.
func TestReadAppendedReadsOnlyTheNewLines(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	w := mustCreate(t, f.s, testHeader("s1"), ev(0, session.TypeUserMessage, `{"role":"user","content":[{"type":"text","text":"one"}],"id":"u0"}`))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	_, _, x0, err := f.s.InspectExtent(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	// Every event streamed and compacted after the extent refers only to
	// deltas after it.
	var l stepLog
	l.events = make([]session.Event, 1)
	l.add(session.TypeTurnStart, session.TurnStart{Turn: 1})
	l.step(1, 1, longText(4<<10), "", 37)
	l.add(session.TypeTurnEnd, session.TurnEnd{Turn: 1, Reason: session.TurnEndReason{Kind: session.EndCompleted}})
	mustAppend(t, w, l.events[1:]...)
	mustClose(t, w)
	got, x1, err := f.s.ReadAppended(ctx, "s1", x0)
	if err != nil {
		t.Fatal(err)
	}
	_, all, whole, err := f.s.InspectExtent(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, all[1:])
	if x1 != whole {
		t.Errorf("extent after ReadAppended %+v, a whole read's %+v", x1, whole)
	}
	// Nothing appended: nothing read.
	if got, x2, err := f.s.ReadAppended(ctx, "s1", x1); err != nil || len(got) != 0 || x2 != x1 {
		t.Errorf("ReadAppended at the end = %d events, %+v, %v", len(got), x2, err)
	}
}

// What ReadAppended allocates follows the appended lines, not the events
// before the extent: one event appended to a 20,000-event log costs what
// it costs after a 10-event one.
func TestReadAppendedAllocatesForTheAppendedLinesOnly(t *testing.T) {
	ctx := context.Background()
	msg := func(seq int) session.Event {
		return ev(seq, session.TypeUserMessage, fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"m%d"}],"id":"u%d"}`, seq, seq))
	}
	allocated := func(events int) uint64 {
		t.Helper()
		f := newFixture(t, Options{})
		id := fmt.Sprintf("s%d", events)
		var seed []session.Event
		for i := range events {
			seed = append(seed, msg(i))
		}
		mustClose(t, mustCreate(t, f.s, testHeader(id), seed...))
		_, _, x, err := f.s.InspectExtent(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		w, _, _, err := f.s.Open(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, w, msg(events))
		mustClose(t, w)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, _, err := f.s.ReadAppended(ctx, id, x)
		runtime.ReadMemStats(&after)
		if err != nil || len(got) != 1 {
			t.Fatalf("ReadAppended after %d events = %d events, %v", events, len(got), err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(10), allocated(20_000)
	if large > small+64<<10 {
		t.Errorf("ReadAppended of one event allocated %d KiB after 20,000 events, %d KiB after 10", large>>10, small>>10)
	}
}

func TestReadAppendedRefusesWhatIsNotAnAppend(t *testing.T) {
	ctx := context.Background()
	msg := func(seq int, text string) session.Event {
		return ev(seq, session.TypeUserMessage, `{"role":"user","content":[{"type":"text","text":"`+text+`"}],"id":"u"}`)
	}
	cases := []struct {
		name   string
		change func(t *testing.T, f fixture, path string)
	}{
		{"shrunk", func(t *testing.T, f fixture, path string) {
			if err := os.Truncate(path, 10); err != nil {
				t.Fatal(err)
			}
		}},
		{"tail rewritten", func(t *testing.T, f fixture, path string) {
			raw := readFile(t, path)
			raw[len(raw)-5] = 'X'
			if err := os.WriteFile(path, append(raw, lines(msg(2, "more"))...), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by another file", func(t *testing.T, f fixture, path string) {
			// Written beside it and renamed over it, so it is another
			// inode even where a freed one would be reused at once.
			raw := readFile(t, path)
			if err := os.WriteFile(path+".new", append(raw, lines(msg(2, "more"))...), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"refers to deltas before the extent", func(t *testing.T, f fixture, path string) {
			appendRaw(t, path, `{"type":"assistant/message","seq":2,"time":1,"data":{"x":""},"deltaRefs":[{"path":["x"],"from":0,"to":1,"turn":1,"step":1,"index":0,"bytes":3}]}`+"\n")
		}},
		{"an open turn without its writer", func(t *testing.T, f fixture, path string) {
			appendRaw(t, path, lines(ev(2, session.TypeTurnStart, `{"turn":1}`)))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			w := mustCreate(t, f.s, testHeader("s1"), msg(0, "zero"), msg(1, "one"))
			mustClose(t, w)
			_, _, x, err := f.s.InspectExtent(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			c.change(t, f, w.Path())
			if _, _, err := f.s.ReadAppended(ctx, "s1", x); !errors.Is(err, ErrNotAppended) {
				t.Errorf("err = %v, want ErrNotAppended", err)
			}
		})
	}
}
