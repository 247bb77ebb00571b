package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// captured is what a fake server saw of one request.
type captured struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// sseServer serves body byte-for-byte as an event stream and records the
// request.
func sseServer(t *testing.T, body string) (*httptest.Server, *captured) {
	t.Helper()
	return fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	})
}

func fakeServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *captured) {
	t.Helper()
	var mu sync.Mutex
	got := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		*got = captured{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: b}
		mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func newProvider(t *testing.T, cfg Config) *Provider {
	t.Helper()
	if cfg.APIKey == "" && cfg.Env == nil {
		cfg.APIKey = "sk-test"
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func simpleRequest() llm.Request {
	return llm.Request{
		SessionID: "s1",
		Config:    session.CallConfig{Provider: "deepseek", Model: "deepseek-v4-flash"},
		Messages:  []session.Message{{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock("hi")}}},
	}
}

// collect runs one Stream call and renders every chunk as a JSON line.
func collect(t *testing.T, ctx context.Context, p *Provider, req llm.Request) (string, error) {
	t.Helper()
	var lines []string
	err := p.Stream(ctx, req, func(c llm.Chunk) error {
		b, err := session.Marshal(c)
		if err != nil {
			t.Fatalf("marshal chunk: %v", err)
		}
		lines = append(lines, string(b))
		return nil
	})
	return strings.Join(lines, "\n"), err
}

// failureOf asserts err is an *llm.Error and returns its facts.
func failureOf(t *testing.T, err error) session.Failure {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return e.Failure
}

// sse joins event payloads into a wire body, one data line per event.
func sse(payloads ...string) string {
	var sb strings.Builder
	for _, p := range payloads {
		sb.WriteString("data: ")
		sb.WriteString(p)
		sb.WriteString("\n\n")
	}
	return sb.String()
}
