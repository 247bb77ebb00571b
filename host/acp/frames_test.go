package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Every bad frame gets a JSON-RPC error, and the next request still works.
func TestBadFramesGetErrorsAndTheConnectionLivesOn(t *testing.T) {
	w := newWorld(t)
	r := startRaw(t, w)
	outer := t
	cwd := workspace(t)
	big := func(n int) string {
		return `{"jsonrpc":"2.0","id":77,"method":"session/prompt","params":{"sessionId":"x","prompt":[{"type":"text","text":"` + strings.Repeat("a", n) + `"}]}}`
	}
	cases := []struct {
		name, line string
		id         any // nil: null
		code       float64
		message    string
	}{
		{"not json", `{"jsonrpc":"2.0",`, nil, -32700, "Parse error: the frame is not valid JSON; send one JSON-RPC message per line"},
		{"plain text", `hello`, nil, -32700, "Parse error: the frame is not valid JSON; send one JSON-RPC message per line"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, nil, -32600, "Invalid request: a JSON-RPC message must be a JSON object (batches are not supported)"},
		{"scalar", `42`, nil, -32600, "Invalid request: a JSON-RPC message must be a JSON object (batches are not supported)"},
		{"no method no id", `{"jsonrpc":"2.0"}`, nil, -32600, "Invalid request: the message has neither a method nor an id"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}`, nil, -32600, "Invalid request: id must be a string, a number or null"},
		{"number method", `{"jsonrpc":"2.0","id":5,"method":7}`, 5.0, -32600, "Invalid request: method must be a non-empty string"},
		{"unknown method", `{"jsonrpc":"2.0","id":6,"method":"session/teleport","params":{}}`, 6.0, -32601, "Method not found"},
		{"wrong param type", `{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":42,"mcpServers":[]}}`, 7.0, -32602, "Invalid params"},
		{"unknown session", `{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}`, "p", -32002, "Resource not found: unknown session: nope"},
		{"relative cwd", `{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"rel","mcpServers":[]}}`, 8.0, -32602, "Invalid params: cwd must be an absolute path: rel"},
		{"9 MiB line", big(9 << 20), 77.0, -32002, "Resource not found: unknown session: x"},
		{"line at the limit", big(MaxFrameBytes - len(big(0))), 77.0, -32002, "Resource not found: unknown session: x"},
		{"line one byte over the limit", big(MaxFrameBytes - len(big(0)) + 1), 77.0, -32600, fmt.Sprintf("Invalid request: the frame is %d bytes, over the limit of %d bytes; send large content as a resource link instead of embedding it", MaxFrameBytes+1, MaxFrameBytes)},
		{"11 MiB line", big(11 << 20), 77.0, -32600, fmt.Sprintf("Invalid request: the frame is %d bytes, over the limit of %d bytes; send large content as a resource link instead of embedding it", len(big(11<<20)), MaxFrameBytes)},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r.t = t
			defer func() { r.t = outer }()
			r.send(tc.line)
			f := r.next()
			if f["id"] != tc.id {
				t.Errorf("id = %#v, want %#v", f["id"], tc.id)
			}
			code, msg := errorOf(t, f)
			if code != tc.code || msg != tc.message {
				t.Errorf("error = %v %q, want %v %q", code, msg, tc.code, tc.message)
			}
			// Still alive: a following request succeeds.
			r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, 1000+i, cwd))
			ok := r.next()
			if ok["id"] != float64(1000+i) || ok["result"] == nil {
				t.Fatalf("follow-up request failed: %v", ok)
			}
		})
	}
}

func TestBadNotificationsAreIgnoredQuietly(t *testing.T) {
	r := startRaw(t, newWorld(t))
	r.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}`)
	r.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":7}}`)
	r.send(`{"jsonrpc":"2.0","method":"_vendor/unknown","params":{}}`)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`)
	f := r.next()
	if f["id"] != 1.0 {
		t.Fatalf("a notification was answered: %v", f)
	}
	raw, _ := json.Marshal(f["result"])
	if string(raw) != `{"sessions":[]}` {
		t.Errorf("empty list = %s, want sessions: []", raw)
	}
}

func TestScanIDFindsTheTopLevelID(t *testing.T) {
	cases := []struct{ prefix, want string }{
		{`{"jsonrpc":"2.0","id":12,"method":"x","params":{`, `12`},
		{`{"id":"req-1","jsonrpc":"2.0"`, `"req-1"`},
		{`{"jsonrpc":"2.0","method":"x","params":{"id":3`, ``},
		{`{"jsonrpc":"2.0","method":"session/update"`, ``},
		{`{"id" : -4 ,`, `-4`},
		{`{"id":"` + strings.Repeat("x", 256) + `",`, `"` + strings.Repeat("x", 256) + `"`},
		{`{"id":"` + strings.Repeat("x", 257) + `",`, ``},
	}
	for _, tc := range cases {
		if got := string(scanID([]byte(tc.prefix))); got != tc.want {
			t.Errorf("scanID(%s) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

func TestIsResponsePrefixTellsResponsesFromRequests(t *testing.T) {
	cases := []struct {
		prefix string
		want   bool
	}{
		{`{"jsonrpc":"2.0","id":3,"result":{"content":"xxx`, true},
		{`{"id":3,"error":{"code":-32603`, true},
		{`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"prompt":[{"text":"result"`, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"result"`, false},
		{`{"jsonrpc":"2.0","id":3,"params":{`, false},
	}
	for _, tc := range cases {
		if got := isResponsePrefix([]byte(tc.prefix)); got != tc.want {
			t.Errorf("isResponsePrefix(%s) = %v, want %v", tc.prefix, got, tc.want)
		}
	}
}

func TestIsAnswerTellsAnswersFromRequestsAndNotifications(t *testing.T) {
	cases := map[string]bool{
		`{"jsonrpc":"2.0","id":3,"result":{}}`:                           true,
		`{"jsonrpc":"2.0","id":"a,\"method\"","error":{"code":1}}`:       true,
		`{"jsonrpc":"2.0","id":1,"method":"session/request_permission"}`: false,
		`{"jsonrpc":"2.0","method":"session/update","params":{}}`:        false,
		`{"id":1,"result":{}}`:                                           false,
	}
	for frame, want := range cases {
		if got := isAnswer([]byte(frame)); got != want {
			t.Errorf("isAnswer(%s) = %v, want %v", frame, got, want)
		}
	}
}
