package acp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// registerStream adds "stream", a command that writes its first line,
// waits for release, writes a second and finishes.
func registerStream(t *testing.T, w *world, release <-chan struct{}) {
	t.Helper()
	_, err := w.tools.Register(&tools.Definition{
		Name: "stream", Description: "Stream output.", Effect: tools.EffectRead,
		Parameters: tools.Object(), Output: tools.StringOutput,
		Execute: func(ctx context.Context, _ *tools.Call) (any, error) {
			live := tools.LiveOutput(ctx)
			if live == nil {
				return nil, io.ErrClosedPipe
			}
			_, _ = io.WriteString(live, "line 1\n")
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			_, _ = io.WriteString(live, "line 2\n")
			return "line 1\nline 2\n[exit code: 0]", nil
		},
		PresentCall: func(call *tools.Call) *tools.CallView {
			return &tools.CallView{Kind: tools.KindExecute, Title: "Stream", RawInput: json.RawMessage(call.Args)}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A running command's output reaches its card before the command ends.
func TestRunningCommandStreamsItsOutputIntoTheCard(t *testing.T) {
	for _, zed := range []bool{false, true} {
		name := "content"
		if zed {
			name = "zed terminal"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			release := make(chan struct{})
			registerStream(t, w, release)
			h := start(t, w)
			if zed {
				if _, err := h.conn.Initialize(h.ctx, sdk.InitializeRequest{ProtocolVersion: 1,
					ClientCapabilities: sdk.ClientCapabilities{Meta: map[string]any{"terminal_output": true}}}); err != nil {
					t.Fatal(err)
				}
			}
			id := h.newSession(workspace(t))
			var live *sdk.SessionToolCallUpdate
			h.c.mu.Lock()
			h.c.onUpdate = func(n sdk.SessionNotification) {
				if u := n.Update.ToolCallUpdate; u != nil && live == nil && (len(u.Content) > 0 || u.Meta != nil) &&
					u.Status != nil && *u.Status == sdk.ToolCallStatusInProgress {
					live = u
					close(release) // the command goes on only once its first line showed
				}
			}
			h.c.mu.Unlock()
			w.provider.add(toolCalls("stream", `{}`), reply("", "done"))
			if _, err := h.prompt(id, "go"); err != nil {
				t.Fatal(err)
			}
			if live == nil {
				t.Fatal("no live output")
			}
			if zed {
				out, _ := live.Meta["terminal_output"].(map[string]any)
				if out["data"] != "line 1\n" || out["terminal_id"] != "call_1" {
					t.Errorf("live terminal output = %v", live.Meta)
				}
			} else if text := live.Content[0].Content.Content.Text.Text; text != "```console\nline 1\n```" {
				t.Errorf("live card = %q", text)
			}
			// The result comes last; a terminal does not get its output twice.
			ns := h.c.take()
			var last *sdk.SessionToolCallUpdate
			outputs := 0
			for _, n := range ns {
				if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallId == "call_1" {
					last = u
					if _, ok := u.Meta["terminal_output"]; ok {
						outputs++
					}
				}
			}
			if last == nil || last.Status == nil || *last.Status != sdk.ToolCallStatusCompleted {
				t.Fatalf("last update = %+v", last)
			}
			if zed {
				if _, ok := last.Meta["terminal_exit"]; !ok || outputs < 1 {
					t.Errorf("terminal updates: %d outputs, last %v", outputs, last.Meta)
				}
				var data strings.Builder
				for _, n := range ns {
					if u := n.Update.ToolCallUpdate; u != nil {
						if o, ok := u.Meta["terminal_output"].(map[string]any); ok {
							data.WriteString(o["data"].(string))
						}
					}
				}
				if data.String() != "line 1\nline 2\n" {
					t.Errorf("terminal data = %q, want each line once", data.String())
				}
			} else if text := last.Content[0].Content.Content.Text.Text; !strings.Contains(text, "line 2") {
				t.Errorf("result card = %q", text)
			}
		})
	}
}

// fakeTimer is a throttle timer that fires only when the test says so.
type fakeTimer struct {
	fire    func()
	stopped bool
}

func (f *fakeTimer) Stop() bool { f.stopped = true; return true }

func TestLiveOutputThrottlesAndKeepsTheTail(t *testing.T) {
	var got []sdk.SessionUpdate
	ss := &sess{out: newOutbox(func(u sdk.SessionUpdate) error { got = append(got, u); return nil }, nil)}
	now := time.UnixMilli(0)
	var timers []*fakeTimer
	l := &liveOutput{ss: ss, id: "c", now: func() time.Time { return now },
		after: func(d time.Duration, f func()) interface{ Stop() bool } {
			if d != liveInterval {
				t.Errorf("throttle waits %v, want %v", d, liveInterval)
			}
			ft := &fakeTimer{fire: f}
			timers = append(timers, ft)
			return ft
		}}
	_, _ = l.Write([]byte("first\n"))
	for i := 0; i < 1000; i++ {
		_, _ = l.Write([]byte(strings.Repeat("x", 99) + "\n"))
	}
	// The first write went out at once; the rest wait on one timer.
	if len(timers) != 1 {
		t.Fatalf("%d timers, want 1", len(timers))
	}
	now = now.Add(liveInterval)
	timers[0].fire()
	_, _ = l.Write([]byte("late\n")) // within the interval again: a new timer
	l.close()
	ss.out.Close()
	if len(got) != 2 || len(timers) != 2 || !timers[1].stopped {
		t.Fatalf("%d updates, %d timers", len(got), len(timers))
	}
	text := func(i int) string { return got[i].ToolCallUpdate.Content[0].Content.Content.Text.Text }
	if !strings.Contains(text(0), "first") || strings.Contains(text(0), "xxx") {
		t.Errorf("first update = %q", text(0))
	}
	tail := strings.TrimSuffix(strings.TrimPrefix(text(1), "```console\n"), "\n```")
	if len(tail) > maxLiveTail || !strings.HasPrefix(tail, "xxx") || strings.Contains(tail, "first") {
		t.Errorf("tail of %d bytes starts %q", len(tail), tail[:10])
	}
}
