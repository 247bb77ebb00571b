package demo

import (
	"bytes"
	_ "embed"
)

//go:embed session.jsonl
var session []byte

// Session returns the recorded demo session log.
func Session() []byte { return bytes.Clone(session) }
