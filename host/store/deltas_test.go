package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/stream"
)

// stepLog builds the events the agent loop writes for streamed steps, with
// the same encoders.
type stepLog struct{ events []session.Event }

func (l *stepLog) add(typ string, data any, opts ...func(*session.Event)) session.Event {
	e := session.Event{Type: typ, Seq: len(l.events), Time: 1700000000000 + int64(len(l.events)), Data: session.MustMarshal(data)}
	for _, o := range opts {
		o(&e)
	}
	l.events = append(l.events, e)
	return e
}

func (l *stepLog) chunk(turn, step int, c stream.Chunk) int {
	return l.add(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: step, Chunk: session.MustMarshal(c)}).Seq
}

// attempt streams text (and, when args is not empty, one tool call) in
// deltas of size bytes and finishes; it returns the chunk seqs.
func (l *stepLog) attempt(turn, step int, text, args string, size int) []int {
	var seqs []int
	push := func(c stream.Chunk) { seqs = append(seqs, l.chunk(turn, step, c)) }
	push(stream.Chunk{Type: stream.ChunkBlockStart, Index: 0, BlockType: session.BlockText})
	for _, d := range pieces(text, size) {
		push(stream.Chunk{Type: stream.ChunkTextDelta, Index: 0, Delta: d})
	}
	tb := session.TextBlock(text)
	push(stream.Chunk{Type: stream.ChunkBlockEnd, Index: 0, Block: &tb})
	if args != "" {
		push(stream.Chunk{Type: stream.ChunkBlockStart, Index: 1, BlockType: session.BlockToolCall, ID: "call-1", Name: "write"})
		for _, d := range pieces(args, size) {
			push(stream.Chunk{Type: stream.ChunkToolCallDelta, Index: 1, ID: "call-1", Name: "write", ArgumentsDelta: d})
		}
		cb := session.ToolCallBlock("call-1", "write", args)
		push(stream.Chunk{Type: stream.ChunkBlockEnd, Index: 1, Block: &cb})
	}
	push(stream.Chunk{Type: stream.ChunkUsage, Usage: &session.Usage{InputTokens: 10, OutputTokens: 20}})
	push(stream.Chunk{Type: stream.ChunkFinish, Kind: stream.FinishStop})
	return seqs
}

// step is one whole step: boundaries, an attempt, the message and the tool
// call.
func (l *stepLog) step(turn, step int, text, args string, size int) {
	l.add(session.TypeStepStart, session.StepBoundary{Turn: turn, Step: step})
	seqs := l.attempt(turn, step, text, args, size)
	l.message(turn, step, text, args, seqs)
	l.add(session.TypeStepEnd, session.StepBoundary{Turn: turn, Step: step})
}

func (l *stepLog) message(turn, step int, text, args string, seqs []int) {
	content := []session.ContentBlock{session.TextBlock(text)}
	if args != "" {
		content = append(content, session.ToolCallBlock("call-1", "write", args))
	}
	msg := session.Message{Role: session.RoleAssistant, Content: content, Source: session.ModelSource("p", "m"), ID: fmt.Sprintf("a%d", len(l.events))}
	l.add(session.TypeAssistantMessage, session.AssistantMessage{Turn: turn, Step: step, Message: msg}, func(e *session.Event) {
		e.SourceEventSeqs, e.SurfaceOp = session.Sources(seqs...), session.OpAppend
	})
	if args != "" {
		l.add(session.TypeToolCall, session.ToolCall{Turn: turn, Step: step, CallID: "call-1", Name: "write", Arguments: args})
	}
}

// pieces cuts s into deltas of about size bytes, never inside a character
// (a provider's deltas are whole strings).
func pieces(s string, size int) []string {
	var out []string
	for len(s) > size {
		n := size
		for !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// longText is n bytes of prose with characters that JSON escapes.
func longText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d: \"quoted\" <tag> & é\t\n", i)
	}
	s := b.String()[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1] + "x"
	}
	return s
}

func writeAndInspect(t *testing.T, events []session.Event) ([]byte, []session.Event) {
	t.Helper()
	f := newFixture(t, Options{})
	w := mustCreate(t, f.s, testHeader("s1"))
	for _, e := range events {
		mustAppend(t, w, e)
	}
	mustClose(t, w)
	_, got, err := f.s.Inspect(context.Background(), "s1")
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	return readFile(t, w.Path()), got
}

func TestLongStreamedTextIsStoredOnceAndReadBackExactly(t *testing.T) {
	var l stepLog
	l.add(session.TypeTurnStart, session.TurnStart{Turn: 1})
	text := longText(200 << 10)
	args := `{"path":"a.txt","content":` + string(session.MustMarshal(longText(50<<10))) + `}`
	l.step(1, 1, text, args, 37)
	l.add(session.TypeTurnEnd, session.TurnEnd{Turn: 1, Reason: session.TurnEndReason{Kind: session.EndCompleted}})

	raw, got := writeAndInspect(t, l.events)
	sameEvents(t, got, l.events)
	encoded := session.MustMarshal(text)
	if n := bytes.Count(raw, encoded[1:len(encoded)-1]); n != 0 {
		t.Errorf("the whole text is stored %d times beside its deltas, want 0", n)
	}
	// block-end text, message text, block-end arguments, message arguments, tool/call arguments
	if n := bytes.Count(raw, []byte(`"deltaRefs"`)); n != 4 {
		t.Errorf("%d lines carry deltaRefs, want 4 (two block-ends, the message, the tool call)", n)
	}
	var full int
	for _, e := range l.events {
		line, _ := e.MarshalLine()
		full += len(line) + 1
	}
	// The copies: text in block-end and message; arguments in block-end,
	// message and tool/call (escaped once more there, a string in a string).
	copies := 2*(len(encoded)-2) + 2*(len(args)+bytes.Count([]byte(args), []byte(`"`))+bytes.Count([]byte(args), []byte(`\`)))
	if saved := full - len(raw); saved < copies {
		t.Errorf("log is %d bytes, %d less than with every copy inline; want at least the %d bytes of the copies", len(raw), saved, copies)
	}
}

func TestShortTextsStayInline(t *testing.T) {
	var l stepLog
	l.add(session.TypeTurnStart, session.TurnStart{Turn: 1})
	l.step(1, 1, strings.Repeat("a", compactMinBytes-1), "", 10)
	raw, got := writeAndInspect(t, l.events)
	sameEvents(t, got, l.events)
	if bytes.Contains(raw, []byte(`deltaRefs`)) {
		t.Errorf("a text under %d bytes was compacted:\n%s", compactMinBytes, raw)
	}
}

func TestTextThatDiffersFromItsDeltasStaysInline(t *testing.T) {
	var l stepLog
	l.add(session.TypeTurnStart, session.TurnStart{Turn: 1})
	l.add(session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1})
	text := longText(4 << 10)
	l.chunk(1, 1, stream.Chunk{Type: stream.ChunkBlockStart, Index: 0, BlockType: session.BlockText})
	for _, d := range pieces(text, 100) {
		l.chunk(1, 1, stream.Chunk{Type: stream.ChunkTextDelta, Index: 0, Delta: d})
	}
	// The provider's authoritative block differs in its last byte.
	other := session.TextBlock(text[:len(text)-1] + "!")
	l.chunk(1, 1, stream.Chunk{Type: stream.ChunkBlockEnd, Index: 0, Block: &other})
	raw, got := writeAndInspect(t, l.events)
	sameEvents(t, got, l.events)
	if bytes.Contains(raw, []byte(`deltaRefs`)) {
		t.Errorf("a block that is not its deltas was compacted")
	}
}

func TestARetryReferencesItsOwnAttempt(t *testing.T) {
	var l stepLog
	l.add(session.TypeTurnStart, session.TurnStart{Turn: 1})
	l.add(session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1})
	first, second := longText(3<<10), strings.ToUpper(longText(3<<10))
	l.attempt(1, 1, first, "", 64)
	seqs := l.attempt(1, 1, second, "", 64)
	l.message(1, 1, second, "", seqs)
	raw, got := writeAndInspect(t, l.events)
	sameEvents(t, got, l.events)
	last := raw[bytes.LastIndexByte(raw[:len(raw)-1], '\n'):]
	if want := fmt.Sprintf(`"from":%d,`, seqs[1]); !bytes.Contains(last, []byte(want)) {
		t.Errorf("the message does not reference the second attempt's deltas (%s):\n%s", want, last)
	}
}

func TestDeltaRefsAreCheckedOnRead(t *testing.T) {
	var l stepLog
	l.add(session.TypeTurnStart, session.TurnStart{Turn: 1})
	text := longText(2 << 10)
	l.step(1, 1, text, "", 50)
	raw, _ := writeAndInspect(t, l.events)
	n := len(session.MustMarshal(text)) - 2
	for _, tt := range []struct {
		name, old, new, want string
	}{
		{"bytes", fmt.Sprintf(`"bytes":%d`, n), fmt.Sprintf(`"bytes":%d`, n-1), "hold more than"},
		{"too far", `"to":`, `"to":9`, "not before this event"},
		{"path", `"path":["chunk","block","text"]`, `"path":["chunk","block","type"]`, "does not name an empty string"},
		{"index", `"index":0,"from"`, `"index":3,"from"`, "hold 0 bytes"},
		{"shape", `"deltaRefs":[`, `"deltaRefs":{"x":[`, "non-empty array"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := bytes.Replace(raw, []byte(tt.old), []byte(tt.new), 1)
			if bytes.Equal(bad, raw) {
				t.Fatalf("%s not found in the log", tt.old)
			}
			if tt.name == "shape" {
				bad = bytes.Replace(bad, []byte("]}\n"), []byte("]}}\n"), 1)
			}
			f := newFixture(t, Options{})
			writeLog(t, f.s, "s1", string(bad))
			_, _, err := f.s.Inspect(context.Background(), "s1")
			if ce := asCorrupt(t, err); !strings.Contains(ce.Error(), tt.want) {
				t.Errorf("error %q does not say %q", ce.Error(), tt.want)
			}
		})
	}
}

func TestCrashRepairKeepsACompactedStreamReadable(t *testing.T) {
	var l stepLog
	l.add(session.TypeTurnStart, session.TurnStart{Turn: 1})
	l.add(session.TypeStepStart, session.StepBoundary{Turn: 1, Step: 1})
	l.add(session.TypeRequestContext, session.RequestContext{Provider: "p", Model: "m"})
	text := longText(8 << 10)
	l.chunk(1, 1, stream.Chunk{Type: stream.ChunkBlockStart, Index: 0, BlockType: session.BlockText})
	for _, d := range pieces(text, 100) {
		l.chunk(1, 1, stream.Chunk{Type: stream.ChunkTextDelta, Index: 0, Delta: d})
	}
	f := newFixture(t, Options{})
	w := mustCreate(t, f.s, testHeader("s1"))
	mustAppend(t, w, l.events...)
	mustClose(t, w) // as a crash would leave it: no finish, no message

	_, recovered, err := f.s.InspectRecovered(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	_, loaded, err := f.s.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, loaded, recovered)
	_, again, err := f.s.Inspect(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, again, recovered)
	if !bytes.Contains(readFile(t, w.Path()), []byte(`"deltaRefs"`)) {
		t.Errorf("the repaired interrupted message repeats the streamed text instead of referencing it")
	}
	if !strings.Contains(string(again[len(again)-3].Data), `"interrupted":true`) {
		t.Errorf("no interrupted message before the closers: %s", again[len(again)-3].Data)
	}
}

// FuzzRestoreDeltas feeds arbitrary payloads and references to the reader:
// it may refuse them, never panic, and what it accepts is valid JSON.
func FuzzRestoreDeltas(f *testing.F) {
	var l stepLog
	l.add(session.TypeTurnStart, session.TurnStart{Turn: 1})
	l.step(1, 1, longText(2<<10), "", 300)
	f.Add(string(l.events[len(l.events)-3].Data), `[{"path":["chunk","block","text"],"turn":1,"step":1,"index":0,"from":3,"to":9,"bytes":2048}]`)
	f.Add(`{"a":[1,"",{"b":""}]}`, `[{"path":["a",2,"b"],"turn":1,"step":1,"index":0,"from":0,"to":4,"bytes":5}]`)
	prior := l.events
	f.Fuzz(func(t *testing.T, data, refs string) {
		e := session.Event{Type: session.TypeAssistantMessage, Seq: len(prior), Data: []byte(data)}
		out, err := RestoreDeltas(prior, e, []byte(refs))
		if err == nil && !json.Valid(out) && json.Valid([]byte(data)) {
			t.Fatalf("restored %q into invalid JSON %q", data, out)
		}
	})
}
