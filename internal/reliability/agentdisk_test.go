package reliability

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// fillingDisk is a real session log writer on a disk that fills up: from
// the event full says, every append fails with ENOSPC (and so does every
// flush once failFlush is set), the way a full file system answers. It
// records what the store acknowledged.
type fillingDisk struct {
	w    *store.Writer
	full func(e session.Event) bool

	mu        sync.Mutex
	isFull    bool
	failFlush bool
	acked     []session.Event
}

func (d *fillingDisk) Append(events ...session.Event) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range events {
		if d.isFull || d.full(e) {
			d.isFull = true
			return &os.PathError{Op: "write", Path: d.w.Path(), Err: syscall.ENOSPC}
		}
	}
	if err := d.w.Append(events...); err != nil {
		return err
	}
	d.acked = append(d.acked, events...)
	return nil
}

func (d *fillingDisk) Flush() error {
	d.mu.Lock()
	fail := d.isFull && d.failFlush
	d.mu.Unlock()
	if fail {
		return &os.PathError{Op: "fsync", Path: d.w.Path(), Err: syscall.ENOSPC}
	}
	return d.w.Flush()
}

func (d *fillingDisk) Close() error { return d.w.Close() }

func (d *fillingDisk) acknowledged() []session.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]session.Event(nil), d.acked...)
}

// TestFullDiskThroughTheAgentLoopKeepsEveryAcknowledgedEvent runs the
// real agent (the runtime's provider against a local fake model, its tools
// and prompt) over a real store writer whose disk fills up at different
// points of a turn. The user learns why the turn failed (SESSION_WRITE_FAILED
// naming the full disk, from the log or, when the log cannot take even
// that, from the agent), no model request is sent past a failed barrier,
// and the log that loads afterwards holds exactly the events the store
// acknowledged, repaired to a valid, continuable log.
func TestFullDiskThroughTheAgentLoopKeepsEveryAcknowledgedEvent(t *testing.T) {
	cases := []struct {
		name      string
		full      func(e session.Event) bool
		failFlush bool
		// requests is how many model requests the turn may send.
		requests int
	}{
		{"before the model request", func(e session.Event) bool { return e.Type == session.TypeRequestHeader }, false, 0},
		{"while the answer streams", func(e session.Event) bool { return e.Type == session.TypeAssistantChunk }, false, 1},
		{"at the answer, flushes failing too", func(e session.Event) bool { return e.Type == session.TypeAssistantMessage }, true, 1},
		{"at the turn's start", func(e session.Event) bool { return e.Type == session.TypeTurnStart }, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakellm.New(fakellm.Reply{Text: "an answer that will not all fit"})
			defer srv.Close()
			h := newHermetic(t)
			rt := newRuntime(t, compositions.TUI, h.config(t, "", "llm.base_url="+srv.URL, "llm.api_key=k"))
			hdr := session.Header{Version: session.FormatVersion, ID: "00000000-0000-4000-8000-0000000000d1", CreatedAt: 1_750_000_000_000, Cwd: &h.cwd, DelegationDepth: session.Ptr(0)}
			w, err := rt.Store.Create(hdr, nil)
			if err != nil {
				t.Fatal(err)
			}
			disk := &fillingDisk{w: w, full: tc.full, failFlush: tc.failFlush}
			live := session.NewLive(hdr, nil, session.LiveOptions{Sink: disk})
			if err := rt.Sessions.Attach(live); err != nil {
				t.Fatal(err)
			}
			a, err := agent.New(agent.Options{
				Live: live, Provider: rt.Provider, Tools: rt.Tools, Prompt: rt.Prompt,
				Model: rt.Config.Value("llm.model").(string), Log: slog.New(slog.DiscardHandler),
			})
			if err != nil {
				t.Fatal(err)
			}
			a.Followup(agent.UserText("please answer at length", "u1"))
			if err := a.WhenIdle(context.Background()); err != nil {
				t.Fatal(err)
			}
			// What the user is told.
			end, logged := lastEnd(live.Events(0))
			if !logged {
				var ok bool
				if end, ok = a.UnloggedEnd(); !ok {
					t.Fatal("the turn left no outcome at all")
				}
			}
			if end.Kind != session.EndError || end.Error == nil || end.Error.Code != agent.CodeSessionWrite ||
				!strings.Contains(end.Error.Message, "no space left on device") || !strings.Contains(end.Error.Message, "check free disk space") {
				t.Fatalf("turn outcome = %+v (logged %v)", end, logged)
			}
			if n := len(srv.Requests()); n > tc.requests {
				t.Fatalf("%d model requests, at most %d may pass the failed barrier", n, tc.requests)
			}
			if err := a.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			rt.Sessions.Detach(live)
			_ = live.Close()

			// What is on disk: every acknowledged event, then only the
			// repair's closers.
			acked := disk.acknowledged()
			_, events, err := store.New(rt.Store.Root(), store.Options{Log: slog.New(slog.DiscardHandler)}).Load(context.Background(), hdr.ID)
			if err != nil {
				t.Fatalf("the log does not load: %v", err)
			}
			if len(events) < len(acked) {
				t.Fatalf("%d events on disk, %d were acknowledged", len(events), len(acked))
			}
			for i, e := range acked {
				if got := events[i]; got.Seq != e.Seq || got.Type != e.Type || string(got.Data) != string(e.Data) {
					t.Fatalf("acknowledged event %d (%s) is %s on disk", e.Seq, e.Type, got.Type)
				}
			}
			for _, e := range events[len(acked):] {
				if e.Type != session.TypeTurnEnd && e.Type != session.TypeToolResult && e.Type != session.TypeStepEnd {
					t.Errorf("unacknowledged %s event %d on disk", e.Type, e.Seq)
				}
			}
			if err := session.ValidateLog(hdr, events); err != nil {
				t.Fatalf("the repaired log is invalid: %v", err)
			}
			t.Logf("%d events acknowledged, %d on disk after repair", len(acked), len(events))
		})
	}
}

func lastEnd(events []session.Event) (session.TurnEndReason, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == session.TypeTurnEnd {
			var te session.TurnEnd
			if events[i].DecodeData(&te) == nil {
				return te.Reason, true
			}
		}
	}
	return session.TurnEndReason{}, false
}
