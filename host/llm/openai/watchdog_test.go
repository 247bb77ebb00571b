package openai

import (
	"context"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
)

// script writes the pieces of one event stream with simulated delays; send
// and pause report false once the client has gone away.
type script func(send func(string) bool, pause func(time.Duration) bool)

// scriptedTransport answers every request with a scripted event stream;
// reads honour the request context the way a real connection does when it
// is torn down.
type scriptedTransport struct{ script script }

func (s scriptedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ch := make(chan string)
	done := req.Context().Done()
	go func() {
		defer close(ch)
		send := func(piece string) bool {
			select {
			case ch <- piece:
				return true
			case <-done:
				return false
			}
		}
		pause := func(d time.Duration) bool {
			select {
			case <-time.After(d):
				return true
			case <-done:
				return false
			}
		}
		s.script(send, pause)
	}()
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {"text/event-stream"}},
		Body:          io.NopCloser(&chanBody{ctx: req.Context(), ch: ch}),
		ContentLength: -1,
		Request:       req,
	}, nil
}

type chanBody struct {
	ctx context.Context
	ch  <-chan string
	buf []byte
}

func (b *chanBody) Read(p []byte) (int, error) {
	if len(b.buf) == 0 {
		select {
		case s, ok := <-b.ch:
			if !ok {
				return 0, io.EOF
			}
			b.buf = []byte(s)
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func scripted(t *testing.T, cfg Config, s script) *Provider {
	cfg.HTTPClient = &http.Client{Transport: scriptedTransport{s}}
	cfg.BaseURL = "http://llm.test"
	return newProvider(t, cfg)
}

const okTail = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

func TestWatchdogCommentsKeepAQuietStreamAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := scripted(t, Config{StreamIdleTimeout: 100 * time.Millisecond}, func(send func(string) bool, pause func(time.Duration) bool) {
			for range 10 {
				pause(80 * time.Millisecond)
				send(": keep-alive\n\n")
			}
			send(okTail)
		})
		start := time.Now()
		if _, err := collect(t, context.Background(), p, simpleRequest()); err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if elapsed := time.Since(start); elapsed < 800*time.Millisecond {
			t.Fatalf("stream finished after %v; the script spans 800ms of comments", elapsed)
		}
	})
}

func TestWatchdogFiresAfterTheLastActivity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := scripted(t, Config{StreamIdleTimeout: 100 * time.Millisecond}, func(send func(string) bool, pause func(time.Duration) bool) {
			send(": keep-alive\n\n")
			if pause(time.Hour) {
				send(okTail)
			}
		})
		start := time.Now()
		_, err := collect(t, context.Background(), p, simpleRequest())
		if f := failureOf(t, err); f.Code != llm.CodeTimeout {
			t.Fatalf("failure = %+v", f)
		}
		if elapsed := time.Since(start); elapsed != 100*time.Millisecond {
			t.Fatalf("timed out after %v, want exactly the idle timeout", elapsed)
		}
	})
}

func TestWatchdogIgnoresTimeSpentByTheConsumer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := scripted(t, Config{StreamIdleTimeout: 100 * time.Millisecond}, func(send func(string) bool, _ func(time.Duration) bool) {
			send("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
			send(okTail)
		})
		err := p.Stream(context.Background(), simpleRequest(), func(llm.Chunk) error {
			time.Sleep(time.Second) // a slow consumer, e.g. an fsync barrier
			return nil
		})
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
	})
}

func TestRequestTimeoutBoundsTheWholeCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := scripted(t, Config{StreamIdleTimeout: 100 * time.Millisecond, RequestTimeout: 250 * time.Millisecond},
			func(send func(string) bool, pause func(time.Duration) bool) {
				for pause(50*time.Millisecond) && send(": still thinking\n\n") {
				}
			})
		_, err := collect(t, context.Background(), p, simpleRequest())
		f := failureOf(t, err)
		if f.Code != llm.CodeTimeout || f.Message != "DeepSeek request timeout after 250ms" {
			t.Fatalf("failure = %+v", f)
		}
	})
}
