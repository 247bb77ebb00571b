// Package fakellm is a local OpenAI-compatible chat-completions server that
// streams scripted replies over SSE. Tests and benchmarks point the deepseek
// or openai provider at it (llm.base_url) to exercise the real wire protocol
// without a network or an API key.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// ToolCall is one scripted tool call.
type ToolCall struct {
	ID, Name, Arguments string
}

// Reply is one scripted model call. Status other than 0/200 answers with
// that HTTP status and Body instead of a stream. KeepAlive opens the stream
// and then sends only SSE comments, every millisecond, until the client goes
// away: a stalled provider.
type Reply struct {
	Reasoning string
	Text      string
	ToolCalls []ToolCall
	Status    int
	Body      string
	KeepAlive bool
}

// Server serves the scripted replies in order, one per request to
// /chat/completions; a request beyond the script gets HTTP 500.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	script   []Reply
	requests []json.RawMessage
}

// New starts a server with the given script. Close it when done.
func New(script ...Reply) *Server {
	s := &Server{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns the request bodies received so far.
func (s *Server) Requests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, body)
	var reply *Reply
	if n < len(s.script) {
		reply = &s.script[n]
	}
	s.mu.Unlock()
	if reply == nil {
		http.Error(w, `{"error":{"message":"fakellm: script exhausted"}}`, http.StatusInternalServerError)
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(reply.Status)
		_, _ = io.WriteString(w, reply.Body)
		return
	}
	w.Header().Set("content-type", "text/event-stream")
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		flush()
	}
	delta := func(d map[string]any, finish any) map[string]any {
		return map[string]any{"id": "fake", "object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}}
	}
	if reply.KeepAlive {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}
	if reply.Reasoning != "" {
		send(delta(map[string]any{"role": "assistant", "reasoning_content": reply.Reasoning}, nil))
	}
	if reply.Text != "" {
		// Two deltas, so clients see real streaming.
		half := len(reply.Text) / 2
		for half > 0 && !utf8Start(reply.Text[half]) {
			half--
		}
		for _, part := range []string{reply.Text[:half], reply.Text[half:]} {
			if part != "" {
				send(delta(map[string]any{"content": part}, nil))
			}
		}
	}
	for i, tc := range reply.ToolCalls {
		send(delta(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments},
		}}}, nil))
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	send(delta(map[string]any{}, finish))
	send(map[string]any{"id": "fake", "object": "chat.completion.chunk", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	flush()
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
