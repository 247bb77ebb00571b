package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Codes of MCP tool errors.
const (
	// CodeToolError: the tool ran and reported an error (isError).
	CodeToolError = "MCP_TOOL_ERROR"
	// CodeCallFailed: the server refused or failed the call.
	CodeCallFailed = "MCP_CALL_FAILED"
	// CodeServerCrashed: the server exited during the call.
	CodeServerCrashed = "MCP_SERVER_CRASHED"
	// CodeUnavailable: the server is not running and cannot be restarted.
	CodeUnavailable = "MCP_SERVER_UNAVAILABLE"
	// CodeTimeout: the server did not answer within the call timeout.
	CodeTimeout = "MCP_TIMEOUT"
)

const errName = "McpError"

var errCallTimeout = errors.New("mcp call timeout")

// crashGrace is how long a failed call waits to learn whether the server
// died, so the message can say so.
const crashGrace = time.Second

func unavailable(server, why string) error {
	return &tools.Error{Name: errName, Code: CodeUnavailable,
		Message: fmt.Sprintf("MCP server %s is not available: %s; /mcp (or dsh mcp list) shows its status", server, why)}
}

// call runs tool on the server with the call's arguments.
func (c *conn) call(ctx context.Context, tool string, call *tools.Call) (any, error) {
	l, err := c.ready(ctx)
	if err != nil {
		return nil, err
	}
	token, done := c.m.calls.begin(tools.LiveOutput(ctx))
	defer done()
	cctx, cancel := context.WithTimeoutCause(ctx, c.m.opts.CallTimeout, errCallTimeout)
	defer cancel()
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	params.SetProgressToken(token)
	res, err := l.cs.CallTool(cctx, params)
	if err == nil {
		text := resultText(c.cfg.Name, res)
		if res.IsError {
			if text == "" {
				text = "the tool reported an error without a message"
			}
			return nil, &tools.Error{Name: errName, Code: CodeToolError, Message: text}
		}
		return text, nil
	}
	if ctx.Err() != nil {
		// The turn was cancelled or the timeout policy's deadline fired;
		// the SDK told the server (notifications/cancelled).
		return nil, ctx.Err()
	}
	if context.Cause(cctx) == errCallTimeout {
		msg := fmt.Sprintf("MCP server %s did not answer %s within %s; the call was cancelled", c.cfg.Name, tool, c.m.opts.CallTimeout)
		if p := c.m.calls.get(token); p != "" {
			msg += " (last progress: " + p + ")"
		}
		return nil, &tools.Error{Name: errName, Code: CodeTimeout, Message: msg}
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return nil, &tools.Error{Name: errName, Code: CodeCallFailed,
			Message: fmt.Sprintf("MCP server %s refused the call of %s: %s", c.cfg.Name, tool, wire.Message)}
	}
	select {
	case <-l.exited:
		msg := fmt.Sprintf("MCP server %s stopped during the call of %s (%s); it is restarted on the next call", c.cfg.Name, tool, l.exit)
		if st := l.stderr.String(); st != "" {
			msg += "; stderr: " + oneLine(st, 600)
		}
		return nil, &tools.Error{Name: errName, Code: CodeServerCrashed, Message: msg}
	case <-time.After(crashGrace):
	}
	return nil, &tools.Error{Name: errName, Code: CodeCallFailed,
		Message: fmt.Sprintf("MCP server %s: calling %s failed: %v", c.cfg.Name, tool, err)}
}
