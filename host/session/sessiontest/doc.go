// Package sessiontest holds test doubles of dsh's session log backends,
// shared by the tests of the packages that read persisted sessions
// (host/sessionquery, host/sessionquery/searchindex), so that one scriptable fake serves
// them all instead of a copy per package.
//
// Only tests import it: nothing here is linked into dsh. It depends on
// host/session alone, so a package's internal tests can use it even when
// the package itself sits between host/session and this one; each adapts
// Backend.List to its own snapshot type in a line or two.
package sessiontest
