package openai

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

func TestKeepAlivesStopCountingAsProgressAfterTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := scripted(t, Config{StreamIdleTimeout: 100 * time.Millisecond, KeepAliveLimit: 300 * time.Millisecond},
			func(send func(string) bool, pause func(time.Duration) bool) {
				send("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
				for pause(50*time.Millisecond) && send(": keep-alive\n\n") {
				}
			})
		start := time.Now()
		_, err := collect(t, context.Background(), p, simpleRequest())
		f := failureOf(t, err)
		if f.Code != llm.CodeTimeout || f.Message != "DeepSeek stream stalled: no data for 300ms, only keep-alive comments" {
			t.Fatalf("failure = %+v", f)
		}
		// synctest's clock: the limit counts from the last data event.
		if elapsed := time.Since(start); elapsed != 300*time.Millisecond {
			t.Errorf("stalled after %v, want the keep-alive limit", elapsed)
		}
	})
}

func TestAKeepAliveOnlyProviderEndsWithinTheDeadline(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"keep-alive limit", Config{KeepAliveLimit: 50 * time.Millisecond}, "DeepSeek stream stalled: no data for 50ms, only keep-alive comments"},
		{"request deadline", Config{RequestTimeout: 50 * time.Millisecond}, "DeepSeek request timeout after 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakellm.New(fakellm.Reply{KeepAlive: true})
			defer srv.Close()
			tc.cfg.BaseURL = srv.URL
			_, err := collect(t, context.Background(), newProvider(t, tc.cfg), simpleRequest())
			if f := failureOf(t, err); f.Code != llm.CodeTimeout || f.Message != tc.want {
				t.Fatalf("failure = %+v, want %q", f, tc.want)
			}
		})
	}
}

func TestEveryCallHasADeadlineByDefault(t *testing.T) {
	for _, name := range []string{NameDeepSeek, NameOpenAI, "local"} {
		p := newProvider(t, Config{Name: name, BaseURL: "http://llm.test"})
		if p.cfg.RequestTimeout != DefaultRequestTimeout || p.cfg.KeepAliveLimit != DefaultKeepAliveLimit {
			t.Errorf("%s: request timeout %v, keep-alive limit %v", name, p.cfg.RequestTimeout, p.cfg.KeepAliveLimit)
		}
	}
}

func TestAServerIgnoringMaxTokensIsCutAtTheOutputCap(t *testing.T) {
	var events []string
	for range 100 {
		events = append(events, `{"choices":[{"index":0,"delta":{"content":"0123456789"}}]}`)
	}
	events = append(events, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]")
	srv, _ := sseServer(t, sse(events...))
	req := simpleRequest()
	req.Config.MaxTokens = session.Ptr(10) // 160 bytes
	var text strings.Builder
	var fin *llm.Chunk
	err := newProvider(t, Config{BaseURL: srv.URL}).Stream(context.Background(), req, func(c llm.Chunk) error {
		switch c.Type {
		case llm.ChunkTextDelta:
			text.WriteString(c.Delta)
		case llm.ChunkFinish:
			fin = &c
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fin == nil || fin.Kind != llm.FinishMaxTokens {
		t.Fatalf("finish = %+v, want max_tokens", fin)
	}
	if text.Len() != 160 {
		t.Errorf("kept %d bytes of text, want the 160 within the cap", text.Len())
	}
}

func TestAPromptLargerThanTheContextWindowIsRefusedBeforeSending(t *testing.T) {
	var hits atomic.Int32
	srv, _ := fakeServer(t, func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) })
	p := newProvider(t, Config{BaseURL: srv.URL, ContextWindow: 1000})
	req := simpleRequest()
	req.Messages[0].Content = []session.ContentBlock{session.TextBlock(strings.Repeat("pasted log line\n", 500))}
	_, err := collect(t, context.Background(), p, req)
	f := failureOf(t, err)
	if f.Code != llm.CodeContextExceeded || !strings.Contains(f.Message, "more than the 1000-token context window of deepseek-v4-flash") {
		t.Fatalf("failure = %+v", f)
	}
	if hits.Load() != 0 {
		t.Errorf("the server was contacted %d times", hits.Load())
	}
	// Within the window it is sent.
	req.Messages[0].Content = []session.ContentBlock{session.TextBlock("short")}
	_, _ = collect(t, context.Background(), p, req)
	if hits.Load() != 1 {
		t.Errorf("a small prompt reached the server %d times, want 1", hits.Load())
	}

}
