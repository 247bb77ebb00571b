package sessionquery

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// benchLog is a 10,000-event session: turns of a prompt, streamed chunks,
// an answer citing them, a tool call and its result.
func benchLog(n int) []session.Event {
	events := make([]session.Event, 0, n)
	add := func(typ string, data any, opts ...session.AppendOption) {
		events = append(events, ev(len(events), typ, data, opts...))
	}
	for turn := 0; len(events) < n; turn++ {
		add(session.TypeTurnStart, session.TurnStart{Turn: turn})
		add(session.TypeUserMessage, userText(fmt.Sprintf("please look at file %d and fix the failing test", turn)))
		first := len(events)
		for range 4 {
			add(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Chunk: []byte(`{"type":"text-delta","text":"chunk"}`)})
		}
		add(session.TypeAssistantMessage, assistantData(
			session.ReasoningBlock("thinking about it"),
			session.TextBlock(fmt.Sprintf("I will read file %d", turn)),
			session.ToolCallBlock("c", "read", fmt.Sprintf(`{"path":"f%d.go"}`, turn)),
		), session.WithSources(first, first+1, first+2, first+3))
		add(session.TypeToolCall, session.ToolCall{Turn: turn, CallID: "c", Name: "read", Arguments: `{"path":"f.go"}`})
		add(session.TypeToolResult, toolResultData(fmt.Sprintf("package main // %d", turn), nil))
		add(session.TypeTurnEnd, turnEnd(session.EndCompleted))
	}
	return events[:n]
}

func BenchmarkBuildDocuments10k(b *testing.B) {
	events := benchLog(10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildDocuments("s", events); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFilterEventsTextScan10k(b *testing.B) {
	fx := newFixture(b, DefaultConfig())
	l := newLive(b, header("s", 1), benchLog(10000))
	if err := fx.live.Attach(l); err != nil {
		b.Fatal(err)
	}
	filters := []EventFilter{{Kind: KindText, Text: "failing   TEST"}, {Kind: KindSurface, Values: []string{SurfaceCurrent}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fx.svc.FilterEvents(b.Context(), "s", filters); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTitleBatch100Persisted(b *testing.B) {
	fx := newFixture(b, DefaultConfig())
	p := newFake()
	var all []string
	for i := range 100 {
		id := fmt.Sprintf("s%03d", i)
		all = append(all, id)
		log := benchLog(200)
		log = append(log, titleEvent(len(log), "Title "+id))
		p.add(header(id, int64(i)), log...)
	}
	fx.mount(b, p)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fx.svc.ReadTitleSnapshots(b.Context(), all); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTextMatcherLongQuery scans a 64 KiB document for a 2 KiB pasted
// query that only almost occurs, the worst realistic case for the scan.
func BenchmarkTextMatcherLongQuery(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 64<<10 {
		sb.WriteString("func handler(w http.ResponseWriter, r *http.Request) {\n\tlog.Println(r.URL)\n}\n")
	}
	doc := sb.String()
	query := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { ", 36) + "missing"
	m, err := CompileTextFilter(query)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if m.Match(doc) {
			b.Fatal("unexpected match")
		}
	}
}
