// Command dshbench runs every dsh benchmark on one generated corpus and
// prints one table, all figures measured in the same run on the same
// machine: index build beside a bare FTS5 insert of the same documents;
// SearchSessions and SearchEvents p50/p95 for five query kinds beside a
// bare FTS5 query and, when installed, rg -c -F over the logs; no-change
// and small-change reconciliation; session_search end to end through the
// model-facing plugin; ACP cold start of the built binary to the initialize
// response and to the first streamed chunk beside starting true;
// session/new with three stdio MCP servers (internal/mcptest/mcpserver)
// and the session's first MCP tool call beside a bare SDK client's first
// call on the same server (-mcp-only measures just these); true started
// through the sandbox launcher of permission mode auto beside true started
// directly (-sandbox-only measures just these); the TUI
// opening a 10,000-event session (host/tui's own benchmark); the peak
// RSS of each; and the whole-process rows of issue 15 (-whole-only
// measures just these): the built binary run as a user runs it, a new
// process each run, with its wall and CPU time — searches beside rg -l -F,
// listings, index status, ACP initialize and session/list, the TUI's
// /resume picker from the Enter keystroke to its titles on screen (dsh tui
// in a tmux pane, read through a tmux control-mode client), a search after
// another process appended to ten sessions, and one dsh index rebuild.
//
// Each part runs in a child process (this binary re-executed with -part),
// so every peak RSS is that part's own: the child's maxrss from
// os.ProcessState.SysUsage. It is what `make bench` runs, never CI, and it
// asserts nothing about the figures; the targets of issues 9, 18 and 21 are printed
// beside them.
//
//	go run ./internal/bench/dshbench -preset small
//	BENCH_CORPUS_DIR=/var/tmp/dsh-corpus go run ./internal/bench/dshbench   # large, corpus kept
package main
