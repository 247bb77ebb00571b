package session

import (
	"fmt"
	"testing"
)

// benchLog builds a realistic log of about n events: turns of one prompt,
// a streamed assistant reply citing its chunks, a tool call and its result,
// with a compaction replace every 20 turns.
func benchLog(n int) []Event {
	var events []Event
	next := func() int { return len(events) }
	for turn := 1; next() < n; turn++ {
		events = append(events, logEv(next(), TypeTurnStart, TurnStart{Turn: turn}))
		events = append(events, logEv(next(), TypeStepStart, StepBoundary{Turn: turn, Step: 1}))
		events = append(events, userEv(next(), fmt.Sprintf("prompt %d: please look at file %d", turn, turn)))
		var chunks []int
		for range 20 {
			chunks = append(chunks, next())
			events = append(events, logEv(next(), TypeAssistantChunk, AssistantChunk{Turn: turn, Step: 1, Chunk: []byte(`{"type":"text-delta","text":"word "}`)}))
		}
		events = append(events, build(next(), TypeAssistantMessage, AssistantMessage{Turn: turn, Step: 1, Message: assistantMsg(next(),
			TextBlock("looking"), ToolCallBlock(fmt.Sprint("c", turn), "read", `{"path":"a.go"}`))}, []evOpt{src(chunks...)}))
		events = append(events, toolResultEv(next(), fmt.Sprint("c", turn), "package main\nfunc main() {}\n"))
		events = append(events, logEv(next(), TypeStepEnd, StepBoundary{Turn: turn, Step: 1}))
		if turn%20 == 0 {
			f, err := Fold(events)
			if err != nil {
				panic(err)
			}
			nodes := f.Nodes()
			shadow := nodes[:len(nodes)-2]
			events = append(events, pluginUserEv(next(), "summary", replace(shadow[0], shadow[len(shadow)-1]), src(shadow...)))
		}
		events = append(events, logEv(next(), TypeTurnEnd, TurnEnd{Turn: turn, Reason: TurnEndReason{Kind: EndCompleted}}))
	}
	return events
}

func BenchmarkFold10k(b *testing.B) {
	events := benchLog(10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fold(events); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateEvents10k(b *testing.B) {
	events := benchLog(10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ValidateEvents(events); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeriveMessages10k(b *testing.B) {
	events := benchLog(10000)
	f, err := Fold(events)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Messages(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTraceEveryEvent10k(b *testing.B) {
	events := benchLog(10000)
	b.ReportAllocs()
	for b.Loop() {
		f, err := Fold(events)
		if err != nil {
			b.Fatal(err)
		}
		for seq := range events {
			f.Relations(seq)
		}
	}
}

func TestBenchLogIsValid(t *testing.T) {
	events := benchLog(2000)
	if _, err := ValidateEvents(events); err != nil {
		t.Fatal(err)
	}
}
