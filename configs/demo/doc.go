// Package demo holds the recorded conversation that the demo profile
// (dsh --profile demo, llm.provider demo) replays, embedded into the binary
// so that a new user can try the TUI and ACP without an API key.
//
// session.jsonl is an ordinary session log; only its model streams are
// used. One of its tool calls reads back a file name with a
// {{fromRequest:...}} placeholder, so the demo reads a file that exists in
// whatever workspace it runs in. Only compositions should read this
// package.
package demo
