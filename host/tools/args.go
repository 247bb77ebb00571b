package tools

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ParseArguments turns the model's raw argument string into the bytes a Call
// carries: "{}" for an empty or blank string, the compacted JSON when it
// parses, and the raw text otherwise. Invalid JSON is passed through rather
// than rejected so the call is still logged and dispatched, and validation
// reports it to the model as INVALID_ARGS.
func ParseArguments(raw string) json.RawMessage {
	if strings.TrimSpace(raw) == "" {
		return json.RawMessage("{}")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil {
		return json.RawMessage(raw)
	}
	return buf.Bytes()
}

// withArgs returns call itself when its Args are set, else a copy whose Args
// are parsed from Arguments; the caller's Call is never modified.
func withArgs(call *Call) *Call {
	if len(bytes.TrimSpace(call.Args)) > 0 {
		return call
	}
	c := *call
	c.Args = ParseArguments(call.Arguments)
	return &c
}
