// Package lazyregexp holds package-level regular expressions that are
// compiled the first time they are used instead of when their package is
// initialised. Every dsh process (each `dsh sessions …` row, each sandbox
// launcher, each ACP agent) runs the init of every package linked into the
// binary, so a pattern compiled at init is paid for by commands that never
// match it: the markdown renderer's for `dsh index status`, the sandbox
// denial parser's for `dsh sessions search`.
//
// It mirrors the Go toolchain's internal/lazyregexp. A Regexp is safe for
// concurrent use, like regexp.Regexp. In a test binary New compiles at
// once, so a malformed pattern fails every test of its package, not only
// the one that reaches it. Any package may use it; it imports only the
// standard library.
package lazyregexp
