package acp

import (
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
)

// Zed shows command output in a display-only terminal when the client sets
// clientCapabilities._meta.terminal_output: the tool_call carries a
// terminal content block and _meta.terminal_info, output arrives in
// _meta.terminal_output (live while it runs, see live.go) and the end in
// _meta.terminal_exit (the convention of Zed's own agents; it is not in the
// ACP schema). Other clients get the output as a fenced console block, its
// tail live while it runs. Commands still run in dsh, never in the editor.

// terminalCard adds the terminal to a command's tool_call.
func terminalCard(tc *sdk.SessionUpdateToolCall, id, cwd string) {
	tc.Content = []sdk.ToolCallContent{sdk.ToolTerminalRef(id)}
	tc.Meta = map[string]any{"terminal_info": map[string]any{"terminal_id": id, "cwd": cwd}}
}

// markerRE matches the bash tool's closing markers.
var markerRE = lazyregexp.New(`(?m)^\[(exit code: (-?\d+)|killed by signal: (\S+)|timed out after \d+ms)\]\s*$`)

// terminalResult is the output and exit updates of a finished command;
// only the exit when its output was streamed while it ran.
func terminalResult(id string, status sdk.ToolCallStatus, output string, streamed bool) []sdk.SessionUpdate {
	var exitCode, signal any
	data := output
	if ms := markerRE.FindAllStringSubmatchIndex(output, -1); len(ms) > 0 {
		data = strings.TrimRight(output[:ms[0][0]], "\n")
		for _, m := range ms {
			switch {
			case m[4] >= 0:
				if n, err := strconv.Atoi(output[m[4]:m[5]]); err == nil {
					exitCode = n
				}
			case m[6] >= 0:
				signal = output[m[6]:m[7]]
			}
		}
	}
	if data == "(no output)" {
		data = ""
	}
	if data != "" && !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	out := sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(id),
		Meta: map[string]any{"terminal_output": map[string]any{"terminal_id": id, "data": data}}}
	end := sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Status: &status,
		Meta: map[string]any{"terminal_exit": map[string]any{"terminal_id": id, "exit_code": exitCode, "signal": signal}}}
	if streamed {
		return []sdk.SessionUpdate{{ToolCallUpdate: &end}}
	}
	return []sdk.SessionUpdate{{ToolCallUpdate: &out}, {ToolCallUpdate: &end}}
}
