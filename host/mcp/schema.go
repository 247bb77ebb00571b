package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxSchemaBytes bounds one tool's input schema; a larger one is refused
// (it would crowd out the conversation on every request).
const maxSchemaBytes = 64 << 10

// inputSchema validates a tool's inputSchema as the client SDK decoded it
// and returns the JSON requests carry (compact, keys sorted) and the
// validator of call arguments. The schema must be a JSON object of type
// "object". Arguments are checked against it when the SDK's validator
// understands it (JSON Schema 2020-12 without remote references);
// otherwise only their being an object is checked and the server has the
// last word.
func inputSchema(v any) (json.RawMessage, func(json.RawMessage) []string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema is not JSON: %v", err)
	}
	if len(raw) > maxSchemaBytes {
		return nil, nil, fmt.Errorf("input schema is %d bytes, more than the %d allowed", len(raw), maxSchemaBytes)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, nil, fmt.Errorf("input schema must be a JSON object")
	}
	if t, ok := obj["type"]; ok && t != "object" {
		return nil, nil, fmt.Errorf("input schema must have type \"object\", not %v", t)
	}
	if _, ok := obj["type"]; !ok {
		// The spec requires it; providers refuse a parameters object
		// without it, and it is what the server meant.
		obj["type"] = "object"
		raw, _ = json.Marshal(obj)
	}
	var s jsonschema.Schema
	var resolved *jsonschema.Resolved
	if json.Unmarshal(raw, &s) == nil {
		resolved, _ = s.Resolve(nil)
	}
	validate := func(args json.RawMessage) []string {
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		var inst any
		if err := json.Unmarshal(args, &inst); err != nil {
			return []string{fmt.Sprintf("arguments: not valid JSON (%v)", err)}
		}
		if _, ok := inst.(map[string]any); !ok {
			return []string{"arguments: expected an object"}
		}
		if resolved == nil {
			return nil
		}
		if err := resolved.Validate(inst); err != nil {
			return []string{"arguments: " + strings.TrimPrefix(err.Error(), "validating root: ")}
		}
		return nil
	}
	return raw, validate, nil
}
