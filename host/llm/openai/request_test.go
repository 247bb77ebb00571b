package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

func toolSchemas() []tools.Schema {
	return []tools.Schema{
		tools.SchemaOf(&tools.Definition{
			Name:        "bash",
			Description: "Run a shell command in the workspace.",
			Parameters: tools.Object(
				tools.Req("command", tools.String("The command to run.")),
				tools.Field("timeout", tools.Integer("Timeout in milliseconds.")),
			),
		}),
		tools.SchemaOf(&tools.Definition{
			Name:        "read",
			Description: "Read a file with line numbers. Paths may contain <angle> & ampersands.",
			Parameters: tools.Object(
				tools.Req("file_path", tools.String("Absolute or workspace-relative path.")),
				tools.Field("offset", tools.Integer("First line to read, 1-based.")),
			),
		}),
	}
}

func user(text string) session.Message {
	return session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(text)}, Source: session.UserSource}
}

func toolResult(callID string, content ...session.ContentBlock) session.Message {
	return session.Message{Role: session.RoleUser, Source: session.ToolSource(callID),
		Content: []session.ContentBlock{session.ToolResultBlock(callID, content, false)}}
}

// conversation is a representative history: a prompt, the runtime-context
// message, a thinking turn with two parallel tool calls, their results (one
// empty), a thinking answer, and a follow-up.
func conversation() []session.Message {
	return []session.Message{
		user("Fix the failing test in <pkg/a> — it's flaky."),
		{Role: session.RoleUser, Source: session.PluginSource("dsh/system-prompt", "snapshot"), Content: []session.ContentBlock{
			session.TextBlock("Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\nWorkspace: /work/project\nPermission mode: default"),
		}},
		{Role: session.RoleAssistant, Source: session.ModelSource("deepseek", "deepseek-v4-flash"), Content: []session.ContentBlock{
			session.ReasoningBlock("I should read the test "),
			session.ReasoningBlock("and run it."),
			session.ToolCallBlock("call_0", "read", `{"file_path":"pkg/a/a_test.go"}`),
			session.ToolCallBlock("call_1", "bash", `{"command":"go test ./pkg/a/"}`),
		}},
		toolResult("call_0", session.TextBlock("1: package a\n2: \n3: func TestA(t *testing.T) {}")),
		toolResult("call_1"),
		{Role: session.RoleAssistant, Source: session.ModelSource("deepseek", "deepseek-v4-flash"), Content: []session.ContentBlock{
			session.ReasoningBlock("The test passes; the flake is a race."),
			session.TextBlock("The test passes now. "),
			session.TextBlock("The flake was a data race."),
		}},
		user("Thanks — commit it."),
	}
}

func captureBody(t *testing.T, cfg Config, req llm.Request) []byte {
	t.Helper()
	srv, got := sseServer(t, sse(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, "[DONE]"))
	cfg.BaseURL = srv.URL
	if _, err := collect(t, context.Background(), newProvider(t, cfg), req); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return got.Body
}

func TestRequestBodyGolden(t *testing.T) {
	maxTokens := 256000
	temperature := 0.2
	tests := []struct {
		name string
		cfg  Config
		req  llm.Request
	}{
		{
			name: "deepseek-request",
			cfg:  Config{},
			req: llm.Request{
				SessionID: "s1",
				Config:    session.CallConfig{Provider: "deepseek", Model: "deepseek-v4-flash", MaxTokens: &maxTokens, ReasoningEffort: "max"},
				System:    "You are dsh, a coding agent.\n\nUse tools <carefully> & precisely.",
				Tools:     toolSchemas(),
				Messages:  conversation(),
			},
		},
		{
			name: "openai-request",
			cfg:  Config{Name: NameOpenAI},
			req: llm.Request{
				SessionID:   "s1",
				Config:      session.CallConfig{Provider: "openai", Model: "gpt-4.1", MaxTokens: &maxTokens},
				System:      "You are dsh, a coding agent.\n\nUse tools <carefully> & precisely.",
				Tools:       toolSchemas(),
				Messages:    conversation(),
				Temperature: &temperature,
				Stop:        []string{"<END>"},
			},
		},
	}
	g := goldie.New(t, goldie.WithNameSuffix(".golden.json"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := captureBody(t, tt.cfg, tt.req)
			if !json.Valid(body) {
				t.Fatalf("body is not JSON: %s", body)
			}
			if strings.Contains(string(body), `\u003c`) || strings.Contains(string(body), "null") {
				t.Fatalf("body must not HTML-escape or carry nulls: %s", body)
			}
			pretty, err := session.Indent(body)
			if err != nil {
				t.Fatal(err)
			}
			g.Assert(t, tt.name, []byte(pretty+"\n"))
		})
	}
}

func TestRequestMessageMapping(t *testing.T) {
	tests := []struct {
		name     string
		flavour  string
		messages []session.Message
		want     string
	}{
		{
			name: "text before tool results of one user message",
			messages: []session.Message{{Role: session.RoleUser, Content: []session.ContentBlock{
				session.ToolResultBlock("c1", []session.ContentBlock{session.TextBlock("out")}, false),
				session.TextBlock("note"),
				session.ToolResultBlock("c2", nil, true),
			}}},
			want: `[{"role":"user","content":"note"},{"role":"tool","tool_call_id":"c1","content":"out"},{"role":"tool","tool_call_id":"c2","content":"(no output)"}]`,
		},
		{
			name: "user text blocks concatenate without separator",
			messages: []session.Message{{Role: session.RoleUser, Content: []session.ContentBlock{
				session.TextBlock("a"), session.TextBlock("b"),
			}}},
			want: `[{"role":"user","content":"ab"}]`,
		},
		{
			name: "images become a placeholder on this text-only route",
			messages: []session.Message{{Role: session.RoleUser, Content: []session.ContentBlock{
				session.TextBlock("see "), {Type: session.BlockImage, Raw: json.RawMessage(`{"type":"image","mimeType":"image/png","data":"AA=="}`)},
			}}},
			want: `[{"role":"user","content":"see [image omitted: this model accepts text only]"}]`,
		},
		{
			name: "reasoning-only assistant turn keeps empty content and its reasoning",
			messages: []session.Message{{Role: session.RoleAssistant, Content: []session.ContentBlock{
				session.ReasoningBlock("hmm"),
			}}},
			want: `[{"role":"assistant","content":"","reasoning_content":"hmm"}]`,
		},
		{
			name: "empty assistant turn is dropped",
			messages: []session.Message{{Role: session.RoleAssistant, Content: []session.ContentBlock{
				session.TextBlock(""),
			}}, user("next")},
			want: `[{"role":"user","content":"next"}]`,
		},
		{
			name:    "openai flavour sends no reasoning",
			flavour: NameOpenAI,
			messages: []session.Message{{Role: session.RoleAssistant, Content: []session.ContentBlock{
				session.ReasoningBlock("hmm"), session.ToolCallBlock("c1", "read", "{}"),
			}}},
			want: `[{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, Config{Name: tt.flavour})
			got, err := session.Marshal(p.messages(llm.Request{Messages: tt.messages}))
			if err != nil || string(got) != tt.want {
				t.Fatalf("messages = %s (%v)\nwant       %s", got, err, tt.want)
			}
		})
	}
}

func TestThinkingResolution(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		effort   string
		purpose  string
		thinking any // nil: absent
		wire     any // reasoning_effort; nil: absent
		code     string
	}{
		{name: "explicit max", effort: "max", thinking: map[string]any{"type": "enabled"}, wire: "max"},
		{name: "explicit low", effort: "low", thinking: map[string]any{"type": "enabled"}, wire: "low"},
		{name: "off disables thinking and sends no effort", effort: "off", thinking: map[string]any{"type": "disabled"}},
		{name: "no effort and no config sends nothing"},
		{name: "no effort falls back to configured thinking", cfg: Config{Thinking: ThinkingEnabled}, thinking: map[string]any{"type": "enabled"}},
		{name: "no effort falls back to configured effort", cfg: Config{ReasoningEffort: "low"}, thinking: map[string]any{"type": "enabled"}, wire: "low"},
		{name: "title requests never think", effort: "max", purpose: llm.PurposeTitle, thinking: map[string]any{"type": "disabled"}},
		{name: "unknown effort fails before any I/O", effort: "medium", code: llm.CodeUnsupportedEffort},
		{name: "disabled thinking refuses an effort", cfg: Config{Thinking: ThinkingDisabled}, effort: "high", code: llm.CodeUnsupportedEffort},
		{name: "disabled thinking without effort", cfg: Config{Thinking: ThinkingDisabled}, thinking: map[string]any{"type": "disabled"}},
		{name: "openai ignores off", cfg: Config{Name: NameOpenAI}, effort: "off"},
		{name: "openai refuses an effort", cfg: Config{Name: NameOpenAI}, effort: "high", code: llm.CodeUnsupportedEffort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int32
			srv, _ := fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				hits.Add(1)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, sse(`{"choices":[{"index":0,"delta":{"content":"ok"}}]}`, "[DONE]"))
			})
			cfg := tt.cfg
			cfg.BaseURL = srv.URL
			req := simpleRequest()
			req.Config.ReasoningEffort = tt.effort
			req.Purpose = tt.purpose
			p := newProvider(t, cfg)
			body, bodyErr := p.body(req)
			_, err := collect(t, context.Background(), p, req)
			if tt.code != "" {
				if f := failureOf(t, err); f.Code != tt.code {
					t.Fatalf("failure = %+v, want %s", f, tt.code)
				}
				if hits.Load() != 0 || bodyErr == nil {
					t.Fatal("an unsupported effort must fail before any I/O")
				}
				return
			}
			if err != nil || bodyErr != nil {
				t.Fatalf("Stream: %v / body: %v", err, bodyErr)
			}
			var fields map[string]any
			if err := json.Unmarshal(body, &fields); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fields["thinking"], tt.thinking) || !reflect.DeepEqual(fields["reasoning_effort"], tt.wire) {
				t.Fatalf("thinking = %v, reasoning_effort = %v; want %v, %v", fields["thinking"], fields["reasoning_effort"], tt.thinking, tt.wire)
			}
		})
	}
}

func TestRequestWithoutModelFailsBeforeIO(t *testing.T) {
	req := simpleRequest()
	req.Config.Model = ""
	_, err := collect(t, context.Background(), newProvider(t, Config{BaseURL: "http://127.0.0.1:1"}), req)
	if f := failureOf(t, err); f.Code != llm.CodeInvalidRequest {
		t.Fatalf("failure = %+v", f)
	}
}

func TestOptionalFieldsAreOmitted(t *testing.T) {
	body := captureBody(t, Config{}, simpleRequest())
	want := `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`
	if string(body) != want {
		t.Fatalf("body = %s\nwant   %s", body, want)
	}
}
