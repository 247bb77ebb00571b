package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

const crashScriptLen = 600

// crashScript is a deterministic session of turns with streamed chunks
// (some of them hundreds of KB, so a kill is likely to land inside a write),
// tool calls with and without results, and step and turn boundaries.
func crashScript(seed int64, n int) []session.Event {
	r := rand.New(rand.NewPCG(uint64(seed), 99))
	var out []session.Event
	add := func(typ, data string) { out = append(out, ev(len(out), typ, data)) }
	for turn := 1; len(out) < n; turn++ {
		add(session.TypeTurnStart, fmt.Sprintf(`{"turn":%d}`, turn))
		for step := 1; ; step++ {
			add(session.TypeStepStart, fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step))
			for c := range 1 + r.IntN(6) {
				// Plain ASCII deltas need no escaping, which keeps building
				// the big ones cheap.
				delta := fmt.Sprintf("word %d <%d> — ", c, turn)
				if r.IntN(25) == 0 {
					delta = strings.Repeat("x", 16<<10+r.IntN(128<<10))
				}
				add(session.TypeAssistantChunk, fmt.Sprintf(
					`{"turn":%d,"step":%d,"chunk":{"type":"text-delta","index":0,"delta":"`, turn, step)+delta+`"}}`)
			}
			add(session.TypeAssistantMessage, fmt.Sprintf(
				`{"turn":%d,"step":%d,"message":{"role":"assistant","content":[{"type":"text","text":"t%d"}],"source":{"kind":"model","provider":"p","model":"m"},"id":"a%d"}}`,
				turn, step, turn, len(out)))
			calls := r.IntN(4)
			if step >= 3 {
				calls = 0
			}
			for c := range calls {
				e := toolCall(len(out), turn, step, fmt.Sprintf("call-%d-%d-%d", turn, step, c))
				out = append(out, e)
			}
			for c := range calls {
				e := toolResult(len(out), turn, step, fmt.Sprintf("call-%d-%d-%d", turn, step, c), "ok")
				out = append(out, e)
			}
			add(session.TypeStepEnd, fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step))
			if calls == 0 {
				break
			}
		}
		add(session.TypeTurnEnd, fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))
	}
	return out[:n]
}

// helperCrashWriter appends the crash script in random batches, flushing
// now and then and reporting on stdout how many events are durable, until it
// is killed.
func helperCrashWriter(root, id, seedText string) error {
	seed, err := strconv.ParseInt(seedText, 10, 64)
	if err != nil {
		return err
	}
	script := crashScript(seed, crashScriptLen)
	s := New(root, Options{Log: slog.New(slog.DiscardHandler)})
	w, _, events, err := s.Open(context.Background(), id)
	if err != nil {
		return err
	}
	if len(events) != 0 {
		return fmt.Errorf("log already has %d events", len(events))
	}
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	for next := 0; next < len(script); {
		k := min(1+r.IntN(4), len(script)-next)
		if err := w.Append(script[next : next+k]...); err != nil {
			return err
		}
		next += k
		if r.IntN(3) == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Printf("flushed %d\n", next)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Printf("flushed %d\n", len(script))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return w.Close()
}

func TestKillDashNineLosesNothingFlushed(t *testing.T) {
	const runs = 50
	fx := newFixture(t, Options{})
	var openTurns, torn int
	for i := range runs {
		seed := int64(i+1) * 7919
		id := fmt.Sprintf("s-crash-%02d", i)
		mustClose(t, mustCreate(t, fx.s, testHeader(id)))
		killAfter := rand.New(rand.NewPCG(uint64(seed), 1)).IntN(12)

		cmd, stdin, out := startHelper(t, "crash",
			"DSH_STORE_ROOT="+fx.root, "DSH_STORE_ID="+id, "DSH_STORE_SEED="+strconv.FormatInt(seed, 10))
		flushed := 0
		for reports := 0; reports < killAfter && out.Scan(); reports++ {
			n, err := strconv.Atoi(strings.TrimPrefix(out.Text(), "flushed "))
			if err != nil {
				t.Fatalf("run %d: unexpected child output %q", i, out.Text())
			}
			flushed = n
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("run %d: kill: %v", i, err)
		}
		_ = cmd.Wait()
		stdin.Close()

		script := crashScript(seed, crashScriptLen)
		before := fx.logs.String()
		_, events, err := fx.s.Load(t.Context(), id)
		if err != nil {
			t.Fatalf("run %d (seed %d): Load after kill -9: %v", i, seed, err)
		}
		if strings.Count(fx.logs.String(), "incomplete last line") > strings.Count(before, "incomplete last line") {
			torn++
		}
		m := 0
		for m < len(events) && m < len(script) && sameLine(events[m], script[m]) {
			m++
		}
		if m < flushed {
			t.Fatalf("run %d (seed %d): %d events survive but %d were reported flushed", i, seed, m, flushed)
		}
		closers := events[m:]
		if !turnIsOpen(script[:m]) {
			if len(closers) != 0 {
				t.Fatalf("run %d: closed log gained %d events (first %s)", i, len(closers), closers[0].Type)
			}
		} else {
			openTurns++
			checkClosers(t, script[:m], closers)
		}

		entry, err := fx.s.Stat(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		repaired := readFile(t, entry.Path)
		if _, again, err := fx.s.Load(t.Context(), id); err != nil || len(again) != len(events) {
			t.Fatalf("run %d: second Load = %d events, %v", i, len(again), err)
		}
		if !bytes.Equal(readFile(t, entry.Path), repaired) {
			t.Fatalf("run %d: a second Load changed the repaired log", i)
		}
	}
	t.Logf("%d runs: %d left an open turn, %d left a torn line", runs, openTurns, torn)
}

func sameLine(a, b session.Event) bool {
	x, _ := a.MarshalLine()
	y, _ := b.MarshalLine()
	return bytes.Equal(x, y)
}

// turnIsOpen reports whether the last turn/start has no turn/end after it.
func turnIsOpen(events []session.Event) bool {
	open := false
	for _, e := range events {
		switch e.Type {
		case session.TypeTurnStart:
			open = true
		case session.TypeTurnEnd:
			open = false
		}
	}
	return open
}

// checkClosers verifies the repair of an open turn: when the log ends in
// chunks of a stream (the script's streams carry no finish), a finish and the
// interrupted assistant/message holding their text; one outcome-unknown
// result per unanswered call of that turn, a step/end when a step was open,
// then turn/end interrupted.
func checkClosers(t *testing.T, prefix, closers []session.Event) {
	t.Helper()
	start := 0
	for i, e := range prefix {
		if e.Type == session.TypeTurnStart {
			start = i
		}
	}
	unanswered := map[string]int{}
	var order []string
	stepOpen := false
	var streamed strings.Builder
	for _, e := range prefix[start:] {
		switch e.Type {
		case session.TypeAssistantChunk:
			var c struct {
				Chunk struct {
					Delta string `json:"delta"`
				} `json:"chunk"`
			}
			_ = json.Unmarshal(e.Data, &c)
			streamed.WriteString(c.Chunk.Delta)
		case session.TypeAssistantMessage, session.TypeStepEnd:
			streamed.Reset()
		}
		var d struct {
			CallID  string `json:"callId"`
			Message struct {
				Source struct {
					CallID string `json:"callId"`
				} `json:"source"`
			} `json:"message"`
		}
		_ = json.Unmarshal(e.Data, &d)
		switch e.Type {
		case session.TypeToolCall:
			unanswered[d.CallID] = e.Seq
			order = append(order, d.CallID)
		case session.TypeToolResult:
			delete(unanswered, d.Message.Source.CallID)
		case session.TypeStepStart:
			stepOpen = true
		case session.TypeStepEnd:
			stepOpen = false
		}
	}
	var want []string
	if streamed.Len() > 0 {
		want = append(want, "assistant/chunk finish aborted", "assistant/message interrupted "+strconv.Quote(streamed.String()))
	}
	for _, id := range order {
		if seq, ok := unanswered[id]; ok {
			want = append(want, fmt.Sprintf("tool/result %s [%d]", id, seq))
		}
	}
	if stepOpen {
		want = append(want, "step/end")
	}
	want = append(want, "turn/end interrupted")

	var got []string
	last := prefix[len(prefix)-1].Time
	for _, e := range closers {
		if e.Time != last {
			t.Errorf("closer %s has time %d, want the last event's time %d", e.Type, e.Time, last)
		}
		switch e.Type {
		case session.TypeToolResult:
			var d struct {
				Message struct {
					Source struct {
						CallID string `json:"callId"`
					} `json:"source"`
				} `json:"message"`
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			_ = json.Unmarshal(e.Data, &d)
			if d.Error.Code != "TOOL_OUTCOME_UNKNOWN" {
				t.Errorf("synthetic result error code = %q", d.Error.Code)
			}
			got = append(got, fmt.Sprintf("tool/result %s %s", d.Message.Source.CallID, e.SourceEventSeqs))
		case session.TypeTurnEnd:
			var d session.TurnEnd
			_ = json.Unmarshal(e.Data, &d)
			got = append(got, "turn/end "+d.Reason.Kind)
		case session.TypeAssistantChunk:
			var d struct {
				Chunk struct {
					Type, Kind string
				} `json:"chunk"`
			}
			_ = json.Unmarshal(e.Data, &d)
			got = append(got, "assistant/chunk "+d.Chunk.Type+" "+d.Chunk.Kind)
		case session.TypeAssistantMessage:
			var d session.AssistantMessage
			_ = json.Unmarshal(e.Data, &d)
			text := ""
			for _, b := range d.Message.Content {
				text += b.Text
			}
			if !d.Interrupted || string(e.SurfaceOp) != `"append"` {
				t.Errorf("recovered message %s (surfaceOp %s) is not an interrupted append", e.Data, e.SurfaceOp)
			}
			got = append(got, "assistant/message interrupted "+strconv.Quote(text))
		default:
			got = append(got, e.Type)
		}
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("closers:\n got %s\nwant %s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
}
