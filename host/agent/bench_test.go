package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// longLog builds a closed log of n text turns.
func longLog(b *testing.B, n int) []session.Event {
	b.Helper()
	live := session.NewLive(session.Header{ID: "bench", CreatedAt: 1}, nil, session.LiveOptions{})
	must := func(_ session.Event, err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	body := strings.Repeat("some words of a realistic prompt ", 20)
	for turn := 1; turn <= n; turn++ {
		must(live.Append(session.TypeTurnStart, session.TurnStart{Turn: turn}))
		must(live.Append(session.TypeStepStart, session.StepBoundary{Turn: turn, Step: 1}))
		must(live.Append(session.TypeUserMessage, UserText(body, fmt.Sprintf("u%d", turn))))
		must(live.Append(session.TypeAssistantMessage, session.AssistantMessage{Turn: turn, Step: 1, Message: session.Message{
			Role: session.RoleAssistant, Content: []session.ContentBlock{session.TextBlock(body)},
			Source: session.ModelSource("fake", "m1"), ID: fmt.Sprintf("a%d", turn),
		}}, session.WithSources()))
		must(live.Append(session.TypeStepEnd, session.StepBoundary{Turn: turn, Step: 1}))
		must(live.Append(session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.EndCompleted}}))
	}
	return live.Events(0)
}

// endless answers every model call with a short text.
type endless struct{ fakeProvider }

func (p *endless) Stream(ctx context.Context, req llm.Request, yield func(llm.Chunk) error) error {
	return textReply("ok")(ctx, req, yield)
}

// BenchmarkTurnOnLongSession measures the loop's own cost of one text turn
// on a session that already holds 2,000 turns (12,000 events), with
// compaction checks on and a window large enough that none triggers.
func BenchmarkTurnOnLongSession(b *testing.B) {
	events := longLog(b, 2000)
	p := &endless{fakeProvider: fakeProvider{models: map[string]llm.ModelInfo{"m1": {ID: "m1", ContextWindow: 1 << 30}}}}
	live := session.NewLive(session.Header{ID: "bench", CreatedAt: 1}, events, session.LiveOptions{})
	a, err := New(Options{Live: live, Provider: p, Model: "m1", Compaction: CompactionConfig{Enabled: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		a.Followup(UserText("next", "p"))
		if err := a.WhenIdle(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
