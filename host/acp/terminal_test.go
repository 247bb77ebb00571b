package acp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

func TestCommandsShowInADisplayTerminalWhenTheClientAsks(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	if _, err := h.conn.Initialize(h.ctx, sdk.InitializeRequest{ProtocolVersion: 1,
		ClientCapabilities: sdk.ClientCapabilities{Meta: map[string]any{"terminal_output": true}}}); err != nil {
		t.Fatal(err)
	}
	cwd := workspace(t)
	id := h.newSession(cwd)
	h.c.answer = selected(optionAllowOnce)
	w.provider.add(toolCalls("run", `{"command":"ls"}`), reply("", "ok"))
	if _, err := h.prompt(id, "go"); err != nil {
		t.Fatal(err)
	}
	wire := h.wire.String()
	for _, want := range []string{
		`"content":[{"terminalId":"call_1","type":"terminal"}]`,
		`"_meta":{"terminal_info":{"cwd":` + string(mustJSON(cwd)) + `,"terminal_id":"call_1"}}`,
		`"_meta":{"terminal_output":{"data":"ran ` + "```ok```" + `\n","terminal_id":"call_1"}}`,
		`"_meta":{"terminal_exit":{"exit_code":0,"signal":null,"terminal_id":"call_1"}},"sessionUpdate":"tool_call_update","status":"completed"`,
	} {
		if !strings.Contains(wire, want) {
			t.Errorf("the wire lacks %s", want)
		}
	}
	if strings.Contains(wire, "```console") {
		t.Error("a terminal client also got the fenced fallback")
	}
}

func TestTerminalResultParsesTheClosingMarkers(t *testing.T) {
	cases := []struct {
		output, data string
		code, signal any
	}{
		{"hello\n[exit code: 3]", "hello\n", 3, nil},
		{"(no output)\n[exit code: 0]", "", 0, nil},
		{"partial\n[timed out after 100ms]\n[killed by signal: SIGKILL]", "partial\n", nil, "SIGKILL"},
		{"no marker", "no marker\n", nil, nil},
	}
	for _, tc := range cases {
		us := terminalResult("c", sdk.ToolCallStatusCompleted, tc.output, false)
		out := us[0].ToolCallUpdate.Meta["terminal_output"].(map[string]any)
		exit := us[1].ToolCallUpdate.Meta["terminal_exit"].(map[string]any)
		if out["data"] != tc.data || exit["exit_code"] != tc.code || exit["signal"] != tc.signal {
			t.Errorf("%q: data %q, exit %v, signal %v", tc.output, out["data"], exit["exit_code"], exit["signal"])
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
