// Command acpcold measures how fast the built dsh binary answers an editor
// over ACP from a cold start: the time from starting the process to the
// initialize response, then session/new, the first streamed chunk and the
// answer of one prompt against a local fake OpenAI-compatible server
// (internal/fakellm), and process exit after stdin closes. Beside it, the
// same driver starting cat (which echoes the initialize line back) gives the
// floor of process start plus one pipe round trip on this machine.
//
//	go run ./internal/acpcold -bin bin/dsh -n 10
//
// It prints medians; it asserts nothing about them.
package main
