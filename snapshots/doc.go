// Package snapshots holds dsh's keyless golden-file tests (goldie) and the
// replay scenario fixtures they run. The tests drive real compositions over
// ACP with the replay provider and pin the assembled request header of the
// first model request, split into system-prompt.golden.md and
// tool-schemas.golden.json (in the upstream fixture shape
// {"initial":[…],"changes":[…]}: the first header's tools, then those of
// each later header written because the request changed), under the
// default config and under the session-query profile.
//
// A normal test run only compares; make snapshots (go test -update)
// regenerates the goldens. Nothing imports this package.
package snapshots
