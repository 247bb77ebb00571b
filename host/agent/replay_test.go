package agent

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/llm/replay"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// replayScenario drives one agent through a fixed conversation: a tool turn
// with two parallel reads, a turn whose first attempt is an empty response,
// a manual compaction and a turn after it.
func replayScenario(t *testing.T, h *harness) {
	t.Helper()
	h.prompt("read A and B " + strings.Repeat("please ", 60))
	h.prompt("summarize " + strings.Repeat("carefully ", 60))
	if err := h.agent.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.prompt("anything else?")
}

func TestReplayOfARecordedSessionReproducesItsLog(t *testing.T) {
	st := store.New(t.TempDir(), store.Options{Log: slog.New(slog.DiscardHandler)})
	recorder := newFakeProvider(t,
		toolReply(call("a", "read", `{"path":"A"}`), call("b", "read", `{"path":"B"}`)),
		textReply("A and B are fine"),
		chunks(finish(llm.FinishStop)),
		textReply("all good"),
		textReply(summaryText),
		textReply("nothing else"),
	)
	var recorded []session.Event
	persisted(t, st, recorder, false, "m1", func(h *harness) {
		replayScenario(t, h)
		recorded = h.events()
	}, func(o *Options) { o.Tools = fileTools(t, newGates(), &toolTrace{}) })
	entry, err := st.Stat(context.Background(), "sess-r")
	if err != nil {
		t.Fatal(err)
	}

	player, err := replay.New(replay.Config{Name: "fake", Fixtures: []string{entry.Path}, Models: []llm.ModelInfo{{ID: "m1"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t}
	h.live = session.NewLive(session.Header{ID: "sess-replayed", CreatedAt: epoch.UnixMilli(), Cwd: session.Ptr(t.TempDir())}, nil,
		session.LiveOptions{Now: func() time.Time { return epoch }})
	h.agent, err = New(Options{
		Live: h.live, Provider: player, Model: "m1", Tools: fileTools(t, newGates(), &toolTrace{}),
		Now: func() time.Time { return epoch }, NewID: h.newID, Sleep: h.sleep, Rand: func() float64 { return 0.5 },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.agent.Close() })
	replayScenario(t, h)

	replayed := h.events()
	if len(replayed) != len(recorded) {
		t.Fatalf("replayed %d events, recorded %d\nrecorded:\n%s\nreplayed:\n%s", len(replayed), len(recorded), dump(recorded), dump(replayed))
	}
	for i := range recorded {
		a, _ := recorded[i].MarshalLine()
		b, _ := replayed[i].MarshalLine()
		if string(a) != string(b) {
			t.Errorf("event %d differs\nrecorded %s\nreplayed %s", i, a, b)
		}
	}
	if err := player.Check(); err != nil {
		t.Errorf("replay script not fully consumed: %v", err)
	}
	for _, typ := range []string{session.TypeLLMRetry, session.TypeCompactionSummary, session.TypeToolResult} {
		if len(ofType(replayed, typ)) == 0 {
			t.Errorf("scenario has no %s", typ)
		}
	}
}
