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

// argsOf returns the call's parsed arguments, parsing Arguments when the
// caller left Args unset.
func argsOf(call *Call) json.RawMessage {
	if call.Args != nil {
		return call.Args
	}
	return ParseArguments(call.Arguments)
}
