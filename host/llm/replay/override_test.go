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
)

func TestOverrideReplacesThePrimaryScript(t *testing.T) {
	override := writeFile(t, "replay.override.json", `[
		{"kind":"chunks","chunks":[{"type":"block-start","index":0,"blockType":"text"},{"type":"text-delta","index":0,"delta":"scripted"},{"type":"finish","kind":"stop"}]}
	]`)
	// The recorded primary cannot be derived (it was cancelled), but a
	// replacement never derives it.
	p := newReplay(t, Config{Fixtures: []string{"testdata/cancelled.jsonl", "testdata/scenario/session.2.jsonl"}, Override: override})
	mustCall(t, p, request("parent"),
		`{"type":"block-start","index":0,"blockType":"text"}`,
		`{"type":"text-delta","index":0,"delta":"scripted"}`,
		`{"type":"finish","kind":"stop"}`)
	// Children keep their recorded scripts.
	if got, err := call(t, p, request("child")); err != nil || !strings.Contains(got, "early child") {
		t.Fatalf("child got %s, %v", got, err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestOverridePatchesSwapAndAppendCalls(t *testing.T) {
	override := writeFile(t, "replay.override.json", `{"patches":[
		{"at":2,"entry":{"kind":"chunks","chunks":[{"type":"finish","kind":"stop"}]}},
		{"at":0,"entry":{"kind":"throw","chunks":[{"type":"block-start","index":0,"blockType":"text"},{"type":"text-delta","index":0,"delta":"par"}],"message":"upstream closed","code":"STREAM_CLOSED"}}
	]}`)
	// cancelled.jsonl records two calls; call 0 never finished, so it must be
	// patched, and index 2 appends a third call.
	p := newReplay(t, Config{Fixtures: []string{"testdata/cancelled.jsonl"}, Override: override})

	chunks, err := call(t, p, request("s"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != "STREAM_CLOSED" || e.Message != "upstream closed" {
		t.Fatalf("throw entry: err = %v", err)
	}
	if want := `{"type":"block-start","index":0,"blockType":"text"}` + "\n" + `{"type":"text-delta","index":0,"delta":"par"}`; chunks != want {
		t.Fatalf("throw entry streamed:\n%s\nwant:\n%s", chunks, want)
	}
	if got, err := call(t, p, request("s")); err != nil || !strings.Contains(got, `"delta":"second"`) {
		t.Fatalf("recorded call 1: %s, %v", got, err)
	}
	mustCall(t, p, request("s"), `{"type":"finish","kind":"stop"}`)
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestOverrideHangWaitsForCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ready := filepath.Join(t.TempDir(), "hang.ready")
		override := writeFile(t, "o.json", `{"patches":[{"at":0,"entry":{"kind":"hang","readyFile":"`+filepath.ToSlash(ready)+`"}}]}`)
		p := newReplay(t, Config{Fixtures: []string{"testdata/cancelled.jsonl"}, Override: override})

		ctx, cancel := context.WithCancel(context.Background())
		var got []llm.Chunk
		done := make(chan error)
		go func() {
			done <- p.Stream(ctx, request("s"), func(c llm.Chunk) error { got = append(got, c); return nil })
		}()
		synctest.Wait() // the stream is now blocked in its hang
		if _, err := os.Stat(ready); err != nil {
			t.Fatalf("ready file not created before hanging: %v", err)
		}
		select {
		case err := <-done:
			t.Fatalf("hang returned before cancellation: %v", err)
		default:
		}
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("hang ended with %v, want cancellation", err)
		}
		if len(got) != 2 || got[1].Delta != "partial" {
			t.Fatalf("hang streamed %+v, want the partial text", got)
		}
	})
}

func TestFromRequestSubstitution(t *testing.T) {
	override := writeFile(t, "o.json", `[
		{"kind":"chunks","chunks":[
			{"type":"tool-call-delta","index":0,"id":"c1","name":"read","argumentsDelta":"{\"file_path\":\"{{fromRequest:workspace: (\\S+)}}/a.txt\"}"},
			{"type":"text-delta","index":1,"delta":"id={{fromRequest:goal-[0-9a-f]{4}}}"},
			{"type":"finish","kind":"stop"}
		]},
		{"kind":"throw","chunks":[],"message":"{{fromRequest:nothing-like-this}}","code":"SERVER"}
	]`)
	p := newReplay(t, Config{Fixtures: []string{"testdata/scenario/session.2.jsonl"}, Override: override})
	req := request("s", "workspace: /tmp/old", "made goal-beef and goal-c0de", "workspace: /tmp/ws-42\nmode: default")
	mustCall(t, p, req,
		`{"type":"tool-call-delta","index":0,"id":"c1","name":"read","argumentsDelta":"{\"file_path\":\"/tmp/ws-42/a.txt\"}"}`,
		`{"type":"text-delta","index":1,"delta":"id=goal-c0de"}`,
		`{"type":"finish","kind":"stop"}`)

	_, err := call(t, p, req)
	if replayCode(t, err) != llm.CodeReplay || !strings.Contains(err.Error(), `"nothing-like-this" matched nothing`) {
		t.Fatalf("unmatched placeholder: %v", err)
	}
}

func TestFromRequestResolvesAgainstEachLiveRequest(t *testing.T) {
	override := writeFile(t, "o.json", `[
		{"kind":"chunks","chunks":[{"type":"text-delta","index":0,"delta":"{{fromRequest:n=(\\d+)}}"},{"type":"finish","kind":"stop"}]},
		{"kind":"chunks","chunks":[{"type":"text-delta","index":0,"delta":"{{fromRequest:n=(\\d+)}}"},{"type":"finish","kind":"stop"}]}
	]`)
	p := newReplay(t, Config{Fixtures: []string{"testdata/scenario/session.2.jsonl"}, Override: override})
	mustCall(t, p, request("s", "n=1"), `{"type":"text-delta","index":0,"delta":"1"}`, `{"type":"finish","kind":"stop"}`)
	mustCall(t, p, request("s", "n=1", "n=2"), `{"type":"text-delta","index":0,"delta":"2"}`, `{"type":"finish","kind":"stop"}`)
}

func TestOverrideValidation(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"not json", `{`, "must be an array of entries or"},
		{"unknown document key", `{"patches":[],"extra":1}`, "must be an array of entries or"},
		{"unknown entry kind", `[{"kind":"sleep"}]`, `entry 0: unknown kind "sleep"`},
		{"unknown entry field", `[{"kind":"chunks","chunks":[],"delay":5}]`, `unknown field "delay"`},
		{"chunks entry without chunks", `[{"kind":"chunks"}]`, "has chunks and no readyFile"},
		{"throw without code", `[{"kind":"throw","chunks":[],"message":"m"}]`, "non-empty message and code"},
		{"hang with chunks", `[{"kind":"hang","chunks":[]}]`, "only an optional readyFile"},
		{"unknown chunk type", `[{"kind":"chunks","chunks":[{"type":"noise"}]}]`, `chunk 0: unknown chunk type "noise"`},
		{"negative patch index", `{"patches":[{"at":-1,"entry":{"kind":"hang"}}]}`, "non-negative call index"},
		{"duplicate patch index", `{"patches":[{"at":1,"entry":{"kind":"hang"}},{"at":1,"entry":{"kind":"hang"}}]}`, "patched twice"},
		{"patch beyond append", `{"patches":[{"at":5,"entry":{"kind":"hang"}}]}`, "patch index 5 is out of range: the script has 1 model call(s)"},
		{"invalid pattern", `[{"kind":"chunks","chunks":[{"type":"text-delta","index":0,"delta":"{{fromRequest:(}}"}]}]`, "pattern \"(\" is invalid"},
		{"unterminated placeholder", `[{"kind":"chunks","chunks":[{"type":"text-delta","index":0,"delta":"{{fromRequest:x"}]}]`, "unterminated fromRequest placeholder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			override := writeFile(t, "o.json", tt.doc)
			_, err := New(Config{Fixtures: []string{"testdata/scenario/session.2.jsonl"}, Override: override})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "o.json") {
				t.Fatalf("New err = %v, want mention of %q and the file", err, tt.want)
			}
		})
	}
}

func TestPlaceholderParsing(t *testing.T) {
	tests := []struct {
		in, corpus, want string
	}{
		{"plain", "x", "plain"},
		{"a {{fromRequest:b(.)}} c", "b1 b2", "a 2 c"},
		{"{{fromRequest:k=\\w+}}", "k=one k=two", "k=two"},
		{"{{fromRequest:x{2}}}!", "xxx", "xx!"},
		{"{{fromRequest:(a)|(b)}}", "b", "b"},
		{"{{fromRequest:p(\\d)}}{{fromRequest:q(\\d)}}", "p1 q2", "12"},
	}
	for _, tt := range tests {
		got, err := substitute(tt.in, tt.corpus)
		if err != nil || got != tt.want {
			t.Errorf("substitute(%q, %q) = %q, %v; want %q", tt.in, tt.corpus, got, err, tt.want)
		}
	}
}
