package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Recorded-shape DeepSeek payloads: the first thinking delta is an empty
// reasoning_content, usage rides on the finish chunk.
const reasoningAndText = `data: {"id":"a1","object":"chat.completion.chunk","created":1,"model":"deepseek-v4-flash","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"a1","object":"chat.completion.chunk","created":1,"model":"deepseek-v4-flash","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"The user"},"logprobs":null,"finish_reason":null}]}

data: {"id":"a1","object":"chat.completion.chunk","created":1,"model":"deepseek-v4-flash","choices":[{"index":0,"delta":{"content":null,"reasoning_content":" greets."},"logprobs":null,"finish_reason":null}]}

data: {"id":"a1","object":"chat.completion.chunk","created":1,"model":"deepseek-v4-flash","choices":[{"index":0,"delta":{"content":"Hello","reasoning_content":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"a1","object":"chat.completion.chunk","created":1,"model":"deepseek-v4-flash","choices":[{"index":0,"delta":{"content":"!","reasoning_content":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"a1","object":"chat.completion.chunk","created":1,"model":"deepseek-v4-flash","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":7,"total_tokens":27,"prompt_tokens_details":{"cached_tokens":12},"completion_tokens_details":{"reasoning_tokens":3},"prompt_cache_hit_tokens":12,"prompt_cache_miss_tokens":8}}

data: [DONE]

`

func TestStreamReasoningThenText(t *testing.T) {
	srv, got := sseServer(t, reasoningAndText)
	p := newProvider(t, Config{BaseURL: srv.URL, Version: "1.2.3"})
	chunks, err := collect(t, context.Background(), p, simpleRequest())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := strings.Join([]string{
		`{"type":"block-start","index":0,"blockType":"reasoning"}`,
		`{"type":"reasoning-delta","index":0,"delta":"The user"}`,
		`{"type":"reasoning-delta","index":0,"delta":" greets."}`,
		`{"type":"block-start","index":1,"blockType":"text"}`,
		`{"type":"text-delta","index":1,"delta":"Hello"}`,
		`{"type":"text-delta","index":1,"delta":"!"}`,
		`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"The user greets."}}`,
		`{"type":"block-end","index":1,"block":{"type":"text","text":"Hello!"}}`,
		`{"type":"usage","usage":{"inputTokens":8,"outputTokens":7,"cacheReadTokens":12,"reasoningTokens":3}}`,
		`{"type":"finish","kind":"stop"}`,
	}, "\n")
	if chunks != want {
		t.Fatalf("chunks:\n%s\nwant:\n%s", chunks, want)
	}
	if got.Method != "POST" || got.Path != "/chat/completions" {
		t.Errorf("request = %s %s, want POST /chat/completions", got.Method, got.Path)
	}
	for h, v := range map[string]string{
		"Authorization": "Bearer sk-test",
		"Content-Type":  "application/json",
		"Accept":        "text/event-stream",
		"User-Agent":    "dsh/1.2.3",
	} {
		if got.Header.Get(h) != v {
			t.Errorf("header %s = %q, want %q", h, got.Header.Get(h), v)
		}
	}
}

func TestStreamParallelToolCallsWithSplitArguments(t *testing.T) {
	body := sse(
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_"}}]},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read","arguments":"{\"file_path\""}}]},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"path\":\"a.txt\"}"}}]},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":\"b.txt\"}"}}]},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":9,"prompt_cache_hit_tokens":0}}`,
		`[DONE]`,
	)
	srv, _ := sseServer(t, body)
	chunks, err := collect(t, context.Background(), newProvider(t, Config{BaseURL: srv.URL}), simpleRequest())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := strings.Join([]string{
		`{"type":"block-start","index":0,"blockType":"tool-call"}`,
		`{"type":"tool-call-delta","index":0,"id":"call_a","name":"read","argumentsDelta":""}`,
		`{"type":"tool-call-delta","index":0,"id":"call_a","name":"read","argumentsDelta":"{\"file_"}`,
		`{"type":"block-start","index":1,"blockType":"tool-call"}`,
		`{"type":"tool-call-delta","index":1,"id":"call_b","name":"read","argumentsDelta":"{\"file_path\""}`,
		`{"type":"tool-call-delta","index":0,"id":"call_a","name":"read","argumentsDelta":"path\":\"a.txt\"}"}`,
		`{"type":"tool-call-delta","index":1,"id":"call_b","name":"read","argumentsDelta":":\"b.txt\"}"}`,
		`{"type":"block-end","index":0,"block":{"type":"tool-call","id":"call_a","name":"read","arguments":"{\"file_path\":\"a.txt\"}"}}`,
		`{"type":"block-end","index":1,"block":{"type":"tool-call","id":"call_b","name":"read","arguments":"{\"file_path\":\"b.txt\"}"}}`,
		`{"type":"usage","usage":{"inputTokens":30,"outputTokens":9}}`,
		`{"type":"finish","kind":"tool-calls"}`,
	}, "\n")
	if chunks != want {
		t.Fatalf("chunks:\n%s\nwant:\n%s", chunks, want)
	}
}

func TestStreamKeepsIDAndNameFromFirstDeltaCarryingThem(t *testing.T) {
	body := sse(
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"id":"c9","function":{"name":"bash","arguments":"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"id":"","function":{"name":"other"}}]},"finish_reason":"tool_calls"}]}`,
		`[DONE]`,
	)
	srv, _ := sseServer(t, body)
	chunks, err := collect(t, context.Background(), newProvider(t, Config{BaseURL: srv.URL}), simpleRequest())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := strings.Join([]string{
		`{"type":"block-start","index":0,"blockType":"tool-call"}`,
		`{"type":"tool-call-delta","index":0,"argumentsDelta":"{"}`,
		`{"type":"tool-call-delta","index":0,"id":"c9","name":"bash","argumentsDelta":"}"}`,
		`{"type":"block-end","index":0,"block":{"type":"tool-call","id":"c9","name":"bash","arguments":"{}"}}`,
		`{"type":"finish","kind":"tool-calls"}`,
	}, "\n")
	if chunks != want {
		t.Fatalf("chunks:\n%s\nwant:\n%s", chunks, want)
	}
}

func TestStreamCommentsAreNotChunks(t *testing.T) {
	body := ": keep-alive\n\n" + sse(`{"choices":[{"index":0,"delta":{"content":"ok"}}]}`) +
		": SSE keep-alive comment\n\n" + sse(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`)
	srv, _ := sseServer(t, body)
	chunks, err := collect(t, context.Background(), newProvider(t, Config{BaseURL: srv.URL}), simpleRequest())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := strings.Join([]string{
		`{"type":"block-start","index":0,"blockType":"text"}`,
		`{"type":"text-delta","index":0,"delta":"ok"}`,
		`{"type":"block-end","index":0,"block":{"type":"text","text":"ok"}}`,
		`{"type":"finish","kind":"stop"}`,
	}, "\n")
	if chunks != want {
		t.Fatalf("chunks:\n%s\nwant:\n%s", chunks, want)
	}
}

func TestStreamUsesLatestUsageFromTrailingChunk(t *testing.T) {
	body := sse(
		`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
		`{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":40},"prompt_cache_hit_tokens":30}}`,
		`[DONE]`,
	)
	srv, _ := sseServer(t, body)
	chunks, err := collect(t, context.Background(), newProvider(t, Config{BaseURL: srv.URL}), simpleRequest())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	const usage = `{"type":"usage","usage":{"inputTokens":10,"outputTokens":4,"cacheReadTokens":40}}`
	if !strings.Contains(chunks, usage+"\n"+`{"type":"finish","kind":"stop"}`) || strings.Count(chunks, `"type":"usage"`) != 1 {
		t.Fatalf("want exactly one usage (cached_tokens preferred) right before finish:\n%s", chunks)
	}
}

func TestStreamFinishMapping(t *testing.T) {
	tests := []struct {
		name   string
		events []string
		finish string
	}{
		{"length is max-tokens",
			[]string{`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]}`},
			`{"type":"finish","kind":"max-tokens"}`},
		{"content filter is an error with the upper-cased reason",
			[]string{`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"content_filter"}]}`},
			`{"type":"finish","kind":"error","failure":{"message":"model stopped: content_filter","code":"CONTENT_FILTER"}}`},
		{"insufficient system resource",
			[]string{`{"choices":[{"index":0,"delta":{},"finish_reason":"insufficient_system_resource"}]}`},
			`{"type":"finish","kind":"error","failure":{"message":"model stopped: insufficient_system_resource","code":"INSUFFICIENT_SYSTEM_RESOURCE"}}`},
		{"stop with no blocks is an empty response",
			[]string{`{"choices":[{"index":0,"delta":{"content":"","reasoning_content":""},"finish_reason":"stop"}]}`},
			`{"type":"finish","kind":"error","failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}`},
		{"absent finish with no blocks is an empty response",
			[]string{`{"choices":[]}`},
			`{"type":"finish","kind":"error","failure":{"message":"model returned a completed response with no content","code":"EMPTY_RESPONSE"}}`},
		{"absent finish with content is stop",
			[]string{`{"choices":[{"index":0,"delta":{"content":"a"}}]}`},
			`{"type":"finish","kind":"stop"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := sseServer(t, sse(append(tt.events, "[DONE]")...))
			chunks, err := collect(t, context.Background(), newProvider(t, Config{BaseURL: srv.URL}), simpleRequest())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			lines := strings.Split(chunks, "\n")
			if last := lines[len(lines)-1]; last != tt.finish {
				t.Fatalf("finish = %s, want %s", last, tt.finish)
			}
		})
	}
}

func TestStreamBrokenStreams(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		code     string
		message  string
		prefixed string // chunks streamed before the failure
	}{
		{"eof before done", sse(`{"choices":[{"index":0,"delta":{"content":"par"}}]}`),
			llm.CodeStreamClosed, "DeepSeek stream ended before [DONE]; the response was cut off",
			`{"type":"block-start","index":0,"blockType":"text"}` + "\n" + `{"type":"text-delta","index":0,"delta":"par"}`},
		{"done without blank line terminator", sse(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`) + "data: [DONE]\n",
			llm.CodeStreamClosed, "", ""},
		{"non-json payload", "data: {not json\n\n",
			llm.CodeMalformed, "malformed stream payload from DeepSeek: {not json", ""},
		{"in-band error object", sse(`{"error":{"message":"upstream overloaded","code":502}}`),
			llm.CodeServer, "upstream overloaded", ""},
		{"in-band quota error", "event: error\n" + sse(`{"error":{"message":"Insufficient Balance"}}`),
			llm.CodeQuota, "Insufficient Balance", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := sseServer(t, tt.body)
			chunks, err := collect(t, context.Background(), newProvider(t, Config{BaseURL: srv.URL}), simpleRequest())
			f := failureOf(t, err)
			if f.Code != tt.code || (tt.message != "" && f.Message != tt.message) {
				t.Fatalf("failure = %+v, want code %s message %q", f, tt.code, tt.message)
			}
			if tt.prefixed != "" && chunks != tt.prefixed {
				t.Fatalf("chunks before failure:\n%s\nwant:\n%s", chunks, tt.prefixed)
			}
			if strings.Contains(chunks, `"finish"`) {
				t.Fatalf("a failed stream must not emit finish:\n%s", chunks)
			}
		})
	}
}

func TestStreamJSONBodyInsteadOfEventStream(t *testing.T) {
	srv, _ := fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, `{"id":"x","choices":[{"message":{"content":"hi"}}]}`)
	})
	_, err := collect(t, context.Background(), newProvider(t, Config{BaseURL: srv.URL}), simpleRequest())
	if f := failureOf(t, err); f.Code != llm.CodeMalformed || !strings.Contains(f.Message, "instead of an event stream") {
		t.Fatalf("failure = %+v", f)
	}
}

func TestStreamEmptyBodyIsEmptyResponse(t *testing.T) {
	srv, _ := fakeServer(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	_, err := collect(t, context.Background(), newProvider(t, Config{BaseURL: srv.URL}), simpleRequest())
	if f := failureOf(t, err); f.Code != llm.CodeEmptyResponse {
		t.Fatalf("failure = %+v", f)
	}
}

func TestStreamStopsWhenYieldFails(t *testing.T) {
	srv, _ := sseServer(t, reasoningAndText)
	p := newProvider(t, Config{BaseURL: srv.URL})
	stop := errors.New("consumer gone")
	n := 0
	err := p.Stream(context.Background(), simpleRequest(), func(llm.Chunk) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Fatalf("err = %v after %d chunks; want the yield error after 2", err, n)
	}
}

func TestStreamOpenAIFlavourReadsReasoningField(t *testing.T) {
	body := sse(
		`{"choices":[{"index":0,"delta":{"reasoning":"think"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
		`[DONE]`,
	)
	srv, _ := sseServer(t, body)
	p := newProvider(t, Config{Name: NameOpenAI, BaseURL: srv.URL})
	var a llm.Assembler
	err := p.Stream(context.Background(), simpleRequest(), func(c llm.Chunk) error { a.Push(c); return nil })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	blocks := a.Blocks()
	want := []session.ContentBlock{session.ReasoningBlock("think"), session.TextBlock("ok")}
	if !reflect.DeepEqual(blocks, want) {
		t.Fatalf("blocks = %#v", blocks)
	}
}

func TestStreamToolCallsWithoutWireIndex(t *testing.T) {
	// Some OpenAI-compatible servers omit the index: a new id opens a new
	// call and id-less fragments continue the latest one.
	body := sse(
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"read","arguments":"{\"p\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"read","arguments":"{\"p\":2}"}}]},"finish_reason":"tool_calls"}]}`,
		`[DONE]`,
	)
	srv, _ := sseServer(t, body)
	p := newProvider(t, Config{BaseURL: srv.URL})
	var a llm.Assembler
	if err := p.Stream(context.Background(), simpleRequest(), func(c llm.Chunk) error { a.Push(c); return nil }); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []session.ContentBlock{session.ToolCallBlock("a", "read", `{"p":1}`), session.ToolCallBlock("b", "read", `{"p":2}`)}
	if got := a.Blocks(); !reflect.DeepEqual(got, want) {
		t.Fatalf("blocks = %#v", got)
	}
}
