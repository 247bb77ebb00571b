package replay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func request(sessionID string, texts ...string) llm.Request {
	req := llm.Request{SessionID: sessionID, Config: session.CallConfig{Provider: "deepseek", Model: "deepseek-v4-flash"}}
	for _, t := range texts {
		req.Messages = append(req.Messages, session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(t)}})
	}
	return req
}

// call runs one Stream and renders its chunks as JSON lines.
func call(t *testing.T, p *Provider, req llm.Request) (string, error) {
	t.Helper()
	var lines []string
	err := p.Stream(context.Background(), req, func(c llm.Chunk) error {
		b, err := session.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
		return nil
	})
	return strings.Join(lines, "\n"), err
}

func mustCall(t *testing.T, p *Provider, req llm.Request, want ...string) {
	t.Helper()
	got, err := call(t, p, req)
	if err != nil {
		t.Fatalf("Stream(%s): %v", req.SessionID, err)
	}
	if w := strings.Join(want, "\n"); got != w {
		t.Fatalf("Stream(%s) chunks:\n%s\nwant:\n%s", req.SessionID, got, w)
	}
}

func replayCode(t *testing.T, err error) string {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return e.Code
}

func newReplay(t *testing.T, cfg Config) *Provider {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDeriveScriptsFromRecordedSession(t *testing.T) {
	p := newReplay(t, Config{Fixtures: []string{"testdata/scenario/session.jsonl"}})
	parent := request("live-1", "Say hello")

	// A text turn with reasoning; the packed text row expands to its deltas.
	mustCall(t, p, parent,
		`{"type":"block-start","index":0,"blockType":"reasoning"}`,
		`{"type":"reasoning-delta","index":0,"delta":"A greeting."}`,
		`{"type":"block-start","index":1,"blockType":"text"}`,
		`{"type":"text-delta","index":1,"delta":"Hel"}`,
		`{"type":"text-delta","index":1,"delta":"lo"}`,
		`{"type":"text-delta","index":1,"delta":"!"}`,
		`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"A greeting."}}`,
		`{"type":"block-end","index":1,"block":{"type":"text","text":"Hello!"}}`,
		`{"type":"usage","usage":{"inputTokens":10,"outputTokens":3}}`,
		`{"type":"finish","kind":"stop"}`)
	// A tool turn recorded as a packed tool-call row and an upstream-style finish.
	mustCall(t, p, parent,
		`{"type":"block-start","index":0,"blockType":"tool-call"}`,
		`{"type":"tool-call-delta","index":0,"id":"call_1","name":"read","argumentsDelta":"{\"file_path\""}`,
		`{"type":"tool-call-delta","index":0,"id":"call_1","name":"read","argumentsDelta":":\"a.txt\""}`,
		`{"type":"tool-call-delta","index":0,"id":"call_1","name":"read","argumentsDelta":"}"}`,
		`{"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_1","name":"read","arguments":"{\"file_path\":\"a.txt\"}"}}`,
		`{"type":"finish","kind":"tool-calls"}`)
	// Two attempts in one step: the failed one and its retry are separate calls.
	mustCall(t, p, parent,
		`{"type":"finish","kind":"error","failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}`)
	mustCall(t, p, parent,
		`{"type":"block-start","index":0,"blockType":"text"}`,
		`{"type":"text-delta","index":0,"delta":"DONE"}`,
		`{"type":"block-end","index":0,"block":{"type":"text","text":"DONE"}}`,
		`{"type":"finish","kind":"stop"}`)

	if err := p.Check(); err != nil {
		t.Fatalf("Check after consuming everything: %v", err)
	}
}

func TestSessionsBindToScriptsInFirstCallOrder(t *testing.T) {
	p := newReplay(t, Config{Fixtures: []string{"testdata/scenario"}})
	// Whichever live session calls first gets the primary script; the
	// children follow by createdAt (session.2 was created before session.1),
	// and the late child's seeded parent chunk is not one of its calls.
	first, second, third := request("zeta"), request("alpha"), request("mid")
	if got, err := call(t, p, first); err != nil || !strings.Contains(got, `"delta":"A greeting."`) {
		t.Fatalf("first session got %s, %v", got, err)
	}
	mustCall(t, p, second,
		`{"type":"block-start","index":0,"blockType":"text"}`,
		`{"type":"text-delta","index":0,"delta":"early child"}`,
		`{"type":"finish","kind":"stop"}`)
	mustCall(t, p, third,
		`{"type":"block-start","index":0,"blockType":"text"}`,
		`{"type":"text-delta","index":0,"delta":"late child"}`,
		`{"type":"finish","kind":"stop"}`)
	// The first session keeps its own cursor.
	if got, err := call(t, p, first); err != nil || !strings.Contains(got, `"name":"read"`) {
		t.Fatalf("first session's second call got %s, %v", got, err)
	}

	_, err := call(t, p, request("intruder"))
	if replayCode(t, err) != llm.CodeReplay || !strings.Contains(err.Error(), `unrecorded session (session "intruder"`) ||
		!strings.Contains(err.Error(), "record only 3 session(s)") {
		t.Fatalf("unrecorded session: %v", err)
	}
}

func TestExhaustedScriptFailsLoudly(t *testing.T) {
	p := newReplay(t, Config{Fixtures: []string{"testdata/scenario/session.2.jsonl"}})
	mustCall(t, p, request("s"),
		`{"type":"block-start","index":0,"blockType":"text"}`,
		`{"type":"text-delta","index":0,"delta":"early child"}`,
		`{"type":"finish","kind":"stop"}`)
	chunks, err := call(t, p, request("s"))
	if replayCode(t, err) != llm.CodeReplay || chunks != "" {
		t.Fatalf("exhausted call: chunks %q err %v", chunks, err)
	}
	for _, want := range []string{`session "s" requested model call #2`, "session.2.jsonl records only 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestCheckReportsUnboundAndUnconsumedScripts(t *testing.T) {
	p := newReplay(t, Config{Fixtures: []string{"testdata/scenario"}})
	if _, err := call(t, p, request("")); err != nil {
		t.Fatal(err)
	}
	err := p.Check()
	if err == nil {
		t.Fatal("Check passed with unconsumed scripts")
	}
	for _, want := range []string{
		"the anonymous session consumed 1 of the 4 call(s) recorded in testdata/scenario/session.jsonl",
		"testdata/scenario/session.2.jsonl (1 call(s)) was never bound",
		"testdata/scenario/session.1.jsonl (1 call(s)) was never bound",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check error %q does not say %q", err, want)
		}
	}
}

func TestNewFailsLoudly(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"missing file", Config{Fixtures: []string{filepath.Join(dir, "nope.jsonl")}}, "nope.jsonl does not exist"},
		{"directory without session.jsonl", Config{Fixtures: []string{dir}}, "has no session.jsonl"},
		{"no fixtures", Config{}, "at least one fixture"},
		{"unterminated recorded call", Config{Fixtures: []string{"testdata/cancelled.jsonl"}},
			"cancelled.jsonl: call 0: model call of turn 1 step 1 ended without a finish chunk"},
		{"missing override", Config{Fixtures: []string{"testdata/cancelled.jsonl"}, Override: filepath.Join(dir, "o.json")}, "replay override"},
		{"not a session log", Config{Fixtures: []string{writeFile(t, "x.jsonl", `{"type":"turn/start"}`+"\n")}}, "line 1 is not a session header"},
		{"corrupt middle line", Config{Fixtures: []string{writeFile(t, "y.jsonl", `{"type":"session","id":"x"}`+"\n{oops\n"+`{"type":"turn/end"}`+"\n")}}, "line 2: invalid JSON"},
		{"malformed packed row", Config{Fixtures: []string{writeFile(t, "z.jsonl", `{"type":"session","id":"x"}`+"\n"+
			`{"type":"text-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a","b"]}}`+"\n")}}, "2 members need 1 dt gaps"},
		{"unknown chunk type", Config{Fixtures: []string{writeFile(t, "w.jsonl", `{"type":"session","id":"x"}`+"\n"+
			`{"type":"assistant/chunk","data":{"turn":1,"step":1,"chunk":{"type":"thinking"}}}`+"\n")}}, `unknown chunk type "thinking"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New err = %v, want mention of %q", err, tt.want)
			}
		})
	}
}

func TestProjectedFixtureWithTornTailIsRead(t *testing.T) {
	fixture := writeFile(t, "session.jsonl", `{"type":"session","version":0,"id":"x","createdAt":0}`+"\n\n"+
		`{"type":"assistant/chunk","data":{"turn":1,"step":1,"chunk":{"type":"finish","kind":"stop"}}}`+"\n"+
		`{"type":"assistant/chunk","data":{"turn":1,"st`)
	p := newReplay(t, Config{Fixtures: []string{fixture}})
	mustCall(t, p, request("s"), `{"type":"finish","kind":"stop"}`)
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCompactionSummaryCallIsReplayed(t *testing.T) {
	fixture := writeFile(t, "session.jsonl", `{"type":"session","id":"x","createdAt":0}`+"\n"+
		`{"type":"compaction/summary","data":{"llmStreamCall":true,"rawOutput":[{"type":"text","text":"Summary."}],"usage":{"inputTokens":5,"outputTokens":2}}}`+"\n"+
		`{"type":"compaction/summary","data":{"summary":"not a model call"}}`+"\n")
	p := newReplay(t, Config{Fixtures: []string{fixture}})
	mustCall(t, p, request("s"),
		`{"type":"block-start","index":0,"blockType":"text"}`,
		`{"type":"block-end","index":0,"block":{"type":"text","text":"Summary."}}`,
		`{"type":"usage","usage":{"inputTokens":5,"outputTokens":2}}`,
		`{"type":"finish","kind":"stop"}`)
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCallerCancellationStopsReplay(t *testing.T) {
	p := newReplay(t, Config{Fixtures: []string{"testdata/scenario/session.jsonl"}})
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := p.Stream(ctx, request("s"), func(llm.Chunk) error {
		n++
		if n == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || replayCode(t, err) != llm.CodeAborted || n != 2 {
		t.Fatalf("err = %v after %d chunks", err, n)
	}
}

func TestModelCatalogHasNoDefaults(t *testing.T) {
	p := newReplay(t, Config{Fixtures: []string{"testdata/scenario/session.2.jsonl"}})
	if p.Name() != "deepseek" {
		t.Fatalf("Name() = %q", p.Name())
	}
	if m := p.Model("deepseek-v4-flash"); m.ContextWindow != 0 || m.DefaultMaxTokens != 0 || m.DefaultEffort != "" {
		t.Fatalf("Model() = %+v; replay must not materialize adapter defaults", m)
	}
	if got := len(p.Models()); got != 2 {
		t.Fatalf("Models() has %d entries", got)
	}
	if m := p.Model("other"); m.ID != "other" {
		t.Fatalf("unlisted model = %+v", m)
	}
}

func TestOneStreamPerSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		override := writeFile(t, "o.json", `[{"kind":"hang"},{"kind":"chunks","chunks":[{"type":"finish","kind":"stop"}]}]`)
		p := newReplay(t, Config{Fixtures: []string{"testdata/scenario/session.2.jsonl"}, Override: override})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- p.Stream(ctx, request("s"), func(llm.Chunk) error { return nil }) }()
		synctest.Wait()
		_, err := call(t, p, request("s"))
		if replayCode(t, err) != llm.CodeReplay || !strings.Contains(err.Error(), "one stream per session") {
			t.Fatalf("concurrent call: %v", err)
		}
		cancel()
		<-done
	})
}
