package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
)

type bodyTransport []byte

func (b bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {"text/event-stream"}},
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: -1,
		Request:       req,
	}, nil
}

// BenchmarkStreamTranslate measures parsing and translating a long answer:
// 2,000 reasoning and 8,000 text deltas, as DeepSeek streams them.
func BenchmarkStreamTranslate(b *testing.B) {
	var sb strings.Builder
	for range 2000 {
		sb.WriteString(sse(`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"token "},"finish_reason":null}]}`))
	}
	for range 8000 {
		sb.WriteString(sse(`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"word ","reasoning_content":null},"finish_reason":null}]}`))
	}
	sb.WriteString(sse(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":10000}}`, "[DONE]"))
	body := []byte(sb.String())
	p, err := New(Config{APIKey: "sk-bench", BaseURL: "http://llm.test", HTTPClient: &http.Client{Transport: bodyTransport(body)}})
	if err != nil {
		b.Fatal(err)
	}
	req := simpleRequest()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := p.Stream(context.Background(), req, func(llm.Chunk) error { n++; return nil }); err != nil || n != 10006 {
			b.Fatalf("Stream: %v after %d chunks", err, n)
		}
	}
}
