// Package reliability holds dsh's end-to-end reliability and security
// tests (issue 9), the ones that span several packages or need whole
// processes: the search index damaged underneath a running runtime, two OS
// processes sharing one $DSH_HOME, a full disk through the agent loop,
// `dsh run` and the ACP prompt path, hostile queries through every search
// entry point, path tricks against the file tools under every permission
// mode, cross-workspace probing through a composed runtime, and a hostile
// checkout's .dsh/config.yaml against the real binary (issue 13), and
// corrupt, oversized and non-regular logs beside 1,000 good ones through
// every command that lists, reads, searches or indexes them (issue 14).
//
// It has no non-test code: nothing imports it. Tests that need a separate
// process re-execute the test binary (see TestMain) or run the dsh binary
// built once per test run. Every test is deterministic and bounded; the
// two-process test runs for DSH_RELIABILITY_DURATION (3s by default, 30s
// for the long form of issue 9).
package reliability
