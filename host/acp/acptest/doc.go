// Package acptest holds the pieces of a fake ACP client that the tests of
// host/acp, compositions and snapshots share. Only tests import it.
package acptest
