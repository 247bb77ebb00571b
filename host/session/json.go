package session

import (
	"bytes"
	"encoding/json"
)

// Marshal encodes v as compact JSON without HTML escaping and without a
// trailing newline. Struct fields keep their declaration order, so a payload
// type's field order is its on-disk key order.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// MustMarshal is Marshal for values whose encoding cannot fail (plain structs
// of strings, numbers and raw JSON produced by this package).
func MustMarshal(v any) json.RawMessage {
	b, err := Marshal(v)
	if err != nil {
		panic("session: marshal: " + err.Error())
	}
	return b
}

// MarshalIndent encodes v like Marshal but indented with two spaces.
func MarshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Indent pretty-prints raw JSON with two-space indentation, keeping its key
// order and escaping exactly as stored.
func Indent(raw []byte) (string, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return "", err
	}
	return buf.String(), nil
}
