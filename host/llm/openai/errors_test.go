package openai

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestHTTPErrorClasses(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		flavour string
		status  int
		headers map[string]string
		body    string
		want    session.Failure
	}{
		{name: "401 is auth", status: 401,
			body: `{"error":{"message":"Authentication Fails, Your api key: ****abcd is invalid","type":"authentication_error","param":null,"code":"invalid_request_error"}}`,
			want: session.Failure{Code: "AUTH", Status: 401, Message: "Authentication Fails, Your api key: ****abcd is invalid"}},
		{name: "403 is auth", status: 403, body: `{"error":{"message":"forbidden"}}`,
			want: session.Failure{Code: "AUTH", Status: 403, Message: "forbidden"}},
		{name: "413 is an invalid request", status: 413, body: ``,
			want: session.Failure{Code: "INVALID_REQUEST", Status: 413, Message: "DeepSeek API error (HTTP 413)"}},
		{name: "429 with retry-after seconds", status: 429, headers: map[string]string{"Retry-After": "7"},
			body: `{"error":{"message":"Rate limit reached"}}`,
			want: session.Failure{Code: "RATE_LIMIT", Status: 429, Message: "Rate limit reached", ProviderRetryAfterMs: 7000}},
		{name: "429 with retry-after http date", status: 429,
			headers: map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)},
			want:    session.Failure{Code: "RATE_LIMIT", Status: 429, Message: "DeepSeek API error (HTTP 429)", ProviderRetryAfterMs: 30000}},
		{name: "retry-after in the past is dropped", status: 429,
			headers: map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)},
			want:    session.Failure{Code: "RATE_LIMIT", Status: 429, Message: "DeepSeek API error (HTTP 429)"}},
		{name: "zero and garbage retry-after are dropped", status: 429, headers: map[string]string{"Retry-After": "0"},
			want: session.Failure{Code: "RATE_LIMIT", Status: 429, Message: "DeepSeek API error (HTTP 429)"}},
		{name: "insufficient balance is quota", status: 402, body: `{"error":{"message":"Insufficient Balance","type":"unknown_error"}}`,
			want: session.Failure{Code: "QUOTA", Status: 402, Message: "Insufficient Balance"}},
		{name: "quota text wins over 429", status: 429,
			body: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}`,
			want: session.Failure{Code: "QUOTA", Status: 429, Message: "You exceeded your current quota, please check your plan and billing details."}},
		{name: "400 context overflow", status: 400,
			body: `{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 140000 tokens.","type":"invalid_request_error"}}`,
			want: session.Failure{Code: "CONTEXT_WINDOW_EXCEEDED", Status: 400, Message: "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens."}},
		{name: "400 context overflow by code", status: 400,
			body: `{"error":{"message":"request rejected","code":"context_length_exceeded"}}`,
			want: session.Failure{Code: "CONTEXT_WINDOW_EXCEEDED", Status: 400, Message: "request rejected"}},
		{name: "other 400 is an invalid request", status: 400, body: `{"error":{"message":"Invalid tool schema"}}`,
			want: session.Failure{Code: "INVALID_REQUEST", Status: 400, Message: "Invalid tool schema"}},
		{name: "500 without body keeps the status message", status: 500,
			headers: map[string]string{"X-Request-Id": "req-123"},
			want:    session.Failure{Code: "SERVER", Status: 500, Message: "DeepSeek API error (HTTP 500)", RequestID: "req-123"}},
		{name: "503 html body", status: 503, body: `<html>bad gateway</html>`,
			headers: map[string]string{"X-Deepseek-Request-Id": "ds-9"},
			want:    session.Failure{Code: "SERVER", Status: 503, Message: "DeepSeek API error (HTTP 503)", RequestID: "ds-9"}},
		{name: "other status keeps its number", status: 418, body: `{"message":"teapot"}`,
			want: session.Failure{Code: "HTTP_418", Status: 418, Message: "teapot"}},
		{name: "string error body", status: 404, body: `{"error":"model not found"}`,
			want: session.Failure{Code: "HTTP_404", Status: 404, Message: "model not found"}},
		{name: "openai flavour names itself", flavour: NameOpenAI, status: 502,
			want: session.Failure{Code: "SERVER", Status: 502, Message: "OpenAI API error (HTTP 502)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			p := newProvider(t, Config{Name: tt.flavour, BaseURL: srv.URL, Now: func() time.Time { return now }})
			chunks, err := collect(t, context.Background(), p, simpleRequest())
			if got := failureOf(t, err); got != tt.want {
				t.Fatalf("failure = %+v\nwant      %+v", got, tt.want)
			}
			if chunks != "" {
				t.Fatalf("an HTTP error must not stream chunks: %s", chunks)
			}
		})
	}
}

func TestConnectionRefusedIsUnreachableAndNotRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	l.Close()
	_, err = collect(t, context.Background(), newProvider(t, Config{BaseURL: base + "/"}), simpleRequest())
	f := failureOf(t, err)
	prefix := "DeepSeek API at " + base + " is unreachable: "
	if f.Code != llm.CodeUnreachable || !strings.HasPrefix(f.Message, prefix) || !strings.Contains(f.Message, "refused") {
		t.Fatalf("failure = %+v, want UNREACHABLE starting %q naming the refusal", f, prefix)
	}
	if _, retry := llm.DefaultRetryPolicy().Delay(1, f, nil); retry {
		t.Error("the default policy retries a refused connection")
	}
}

func TestDNSFailuresSplitIntoUnreachableAndTransient(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *net.DNSError
		code string
	}{
		{"no such host", &net.DNSError{Err: "no such host", Name: "llm.invalid", IsNotFound: true}, llm.CodeUnreachable},
		{"resolver timeout", &net.DNSError{Err: "i/o timeout", Name: "llm.invalid", IsTimeout: true}, llm.CodeTransport},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := &http.Client{Transport: &http.Transport{
				DialContext: func(context.Context, string, string) (net.Conn, error) { return nil, tc.err },
			}}
			p := newProvider(t, Config{BaseURL: "http://llm.invalid", HTTPClient: client})
			_, err := collect(t, context.Background(), p, simpleRequest())
			if f := failureOf(t, err); f.Code != tc.code {
				t.Fatalf("failure = %+v, want %s", f, tc.code)
			}
		})
	}
}

func TestMissingKeyFailsPerRequestWithoutContactingTheServer(t *testing.T) {
	var hits atomic.Int32
	srv, _ := fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse(`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`, "[DONE]"))
	})
	env := map[string]string{}
	p, err := New(Config{BaseURL: srv.URL, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatalf("New must not need a key: %v", err)
	}
	_, err = collect(t, context.Background(), p, simpleRequest())
	f := failureOf(t, err)
	if f.Code != llm.CodeMissingCredential || f.Message != "set DEEPSEEK_API_KEY (or llm.api_key) to use the deepseek provider" {
		t.Fatalf("failure = %+v", f)
	}
	if hits.Load() != 0 {
		t.Fatal("server contacted without a key")
	}

	env["DEEPSEEK_API_KEY"] = "sk-later"
	if _, err := collect(t, context.Background(), p, simpleRequest()); err != nil {
		t.Fatalf("key exported after start-up was not picked up: %v", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("hits = %d, want 1", hits.Load())
	}
}

func TestMissingKeyNamesTheConfiguredVariable(t *testing.T) {
	p := newProvider(t, Config{Name: NameOpenAI, Env: func(string) (string, bool) { return "", true }})
	_, err := collect(t, context.Background(), p, simpleRequest())
	if f := failureOf(t, err); f.Message != "set OPENAI_API_KEY (or llm.api_key) to use the openai provider" {
		t.Fatalf("failure = %+v", f)
	}
	p = newProvider(t, Config{APIKeyEnv: "MY_KEY", Env: func(string) (string, bool) { return "", false }})
	_, err = collect(t, context.Background(), p, simpleRequest())
	if f := failureOf(t, err); !strings.HasPrefix(f.Message, "set MY_KEY ") {
		t.Fatalf("failure = %+v", f)
	}
}

func TestInvalidKeyIsRejectedBeforeSending(t *testing.T) {
	for _, key := range []string{"sk-abc\n", "sk abc", "sk-\x00", "sk-clé"} {
		p := newProvider(t, Config{BaseURL: "http://127.0.0.1:1", Env: func(string) (string, bool) { return key, true }})
		_, err := collect(t, context.Background(), p, simpleRequest())
		f := failureOf(t, err)
		if f.Code != llm.CodeInvalidCredential || !strings.Contains(f.Message, "DEEPSEEK_API_KEY") || strings.Contains(f.Message, key) {
			t.Fatalf("key %q: failure = %+v (must name the variable, never echo the key)", key, f)
		}
	}
}

func TestIdleWatchdogTimesOutAHungServer(t *testing.T) {
	tests := []struct {
		name   string
		before string // bytes sent before the server stalls; "" stalls before headers
	}{
		{"waiting for response headers", ""},
		{"mid-stream", sse(`{"choices":[{"index":0,"delta":{"content":"par"}}]}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.before != "" {
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = io.WriteString(w, tt.before)
					w.(http.Flusher).Flush()
				}
				<-r.Context().Done()
			})
			p := newProvider(t, Config{BaseURL: srv.URL, StreamIdleTimeout: 50 * time.Millisecond})
			_, err := collect(t, context.Background(), p, simpleRequest())
			f := failureOf(t, err)
			if f.Code != llm.CodeTimeout || f.Message != "DeepSeek stream idle timeout after 50ms with no data from the server" {
				t.Fatalf("failure = %+v", f)
			}
			if errors.Is(err, context.Canceled) {
				t.Fatal("an idle timeout must not read as caller cancellation")
			}
		})
	}
}

func TestCallerCancelMidStreamClosesTheConnection(t *testing.T) {
	disconnected := make(chan struct{})
	srv, _ := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// Three events in one write: the later ones are already buffered
		// when the caller cancels, and must not be delivered.
		_, _ = io.WriteString(w, sse(`{"choices":[{"index":0,"delta":{"content":"partial"}}]}`,
			`{"choices":[{"index":0,"delta":{"content":" more"}}]}`, `{"choices":[{"index":0,"delta":{"content":" and more"}}]}`))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(disconnected)
	})
	p := newProvider(t, Config{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []llm.Chunk
	err := p.Stream(ctx, simpleRequest(), func(c llm.Chunk) error {
		got = append(got, c)
		if c.Type == llm.ChunkTextDelta {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one matching context.Canceled", err)
	}
	if f := failureOf(t, err); f.Code != llm.CodeAborted {
		t.Fatalf("failure = %+v", f)
	}
	if len(got) != 2 {
		t.Fatalf("chunks = %+v, want block-start and the delta", got)
	}
	<-disconnected
}

func TestCancelledContextFailsBeforeDialing(t *testing.T) {
	var hits atomic.Int32
	srv, _ := fakeServer(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("user pressed esc"))
	_, err := collect(t, ctx, newProvider(t, Config{BaseURL: srv.URL}), simpleRequest())
	if !errors.Is(err, context.Canceled) || !strings.Contains(errors.Unwrap(err).Error(), "user pressed esc") {
		t.Fatalf("err = %v (cause %v)", err, errors.Unwrap(err))
	}
	if hits.Load() != 0 {
		t.Fatal("server contacted after cancellation")
	}
}
